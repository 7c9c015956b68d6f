package org.spatialingest.chaos;

import java.nio.ByteBuffer;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.GenericAppenderFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.InternalRecordWrapper;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFileFactory;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.GeometryFactory;
import org.locationtech.jts.io.WKBWriter;
import org.spatialingest.geometry.HilbertCurve;

/**
 * Another application appending to the job's table through the same catalog, with Iceberg's generic
 * writer: its own rows (ids {@code ext-...}, no source position), its own snapshots, committed
 * while the job commits; Iceberg must retry the losers of each race, and the job must neither fail
 * nor touch these rows.
 */
final class ConcurrentWriter {
  private static final GeometryFactory GEOMETRY = new GeometryFactory();
  private static final int MAX_COMMIT_ATTEMPTS = 10;
  private final Table table;
  private int files;

  ConcurrentWriter(Table table) {
    this.table = table;
  }

  /**
   * Commits {@code commits} appends of {@code rowsPerCommit} rows, {@code pauseMillis} apart;
   * returns the ids.
   */
  List<String> append(String prefix, int commits, int rowsPerCommit, long pauseMillis)
      throws Exception {
    List<String> ids = new ArrayList<>();
    for (int c = 0; c < commits; c++) {
      table.refresh();
      Map<PartitionKey, List<Record>> byPartition = new HashMap<>();
      InternalRecordWrapper wrapper = new InternalRecordWrapper(table.schema().asStruct());
      OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
      for (int i = 0; i < rowsPerCommit; i++) {
        String id = prefix + "-" + c + "-" + i;
        double x = -10 + (i % 400) * 0.1;
        double y = 35 + (i % 250) * 0.1;
        GenericRecord r = GenericRecord.create(table.schema());
        r.setField("id", id);
        r.setField("event_time", now);
        r.setField("ingest_time", now);
        r.setField(
            "geometry",
            ByteBuffer.wrap(new WKBWriter().write(GEOMETRY.createPoint(new Coordinate(x, y)))));
        r.setField("geometry_type", "Point");
        GenericRecord bbox =
            GenericRecord.create(table.schema().findField("bbox").type().asStructType());
        bbox.setField("xmin", x);
        bbox.setField("ymin", y);
        bbox.setField("xmax", x);
        bbox.setField("ymax", y);
        r.setField("bbox", bbox);
        r.setField("hilbert", HilbertCurve.CRS84.key(x, y));
        r.setField("properties", "{\"writer\":\"chaos\"}");
        PartitionKey key = new PartitionKey(table.spec(), table.schema());
        key.partition(wrapper.wrap(r));
        byPartition.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
        ids.add(id);
      }
      OutputFileFactory outputs =
          OutputFileFactory.builderFor(table, 9_000 + files++, 1)
              .format(FileFormat.PARQUET)
              .build();
      GenericAppenderFactory appenders = new GenericAppenderFactory(table.schema(), table.spec());
      List<DataFile> written = new ArrayList<>();
      for (Map.Entry<PartitionKey, List<Record>> e : byPartition.entrySet()) {
        DataWriter<Record> writer =
            appenders.newDataWriter(
                outputs.newOutputFile(table.spec(), e.getKey()), FileFormat.PARQUET, e.getKey());
        try (writer) {
          e.getValue().forEach(writer::write);
        }
        written.add(writer.toDataFile());
      }
      commit(written, prefix);
      Thread.sleep(pauseMillis);
    }
    return ids;
  }

  /**
   * Appends the files, trying again when the job won every one of Iceberg's own retries (its
   * commits come every second under load): a lost race is not a fault this writer is testing.
   */
  private void commit(List<DataFile> written, String prefix) throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      table.refresh();
      AppendFiles append = table.newAppend();
      written.forEach(append::appendFile);
      append.set("chaos.concurrent-writer", prefix);
      try {
        append.commit();
        return;
      } catch (CommitFailedException lost) {
        if (attempt == MAX_COMMIT_ATTEMPTS) {
          throw lost;
        }
        Thread.sleep(200L * attempt);
      }
    }
  }
}
