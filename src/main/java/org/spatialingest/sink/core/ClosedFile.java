package org.spatialingest.sink.core;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;

/**
 * One data file a writer closed, with what the commit and its snapshot summary need to know about
 * it.
 *
 * @param table index of the sink table the file belongs to
 * @param file the data file
 * @param spec the partition spec it was written with (never {@code null}: a format that kept only
 *     the spec id is resolved against the table when it is read, see {@code sink.compat})
 * @param reason why it closed
 * @param bufferedBytes serialized bytes of its rows as they were buffered (to learn the encoding
 *     ratio)
 * @param minIngestMillis oldest ingest (Kafka) timestamp of its rows
 * @param maxIngestMillis newest ingest timestamp of its rows
 * @param closedAtMillis when it was closed; bounds the duplicate check on recommit
 * @param ingestSecondCounts rows per ingest second (epoch seconds), for the row-age-at-commit
 *     histogram; of a close cut into several files (they go in one report and commit together), all
 *     of them on its first file, none on the others
 * @param consumedStaging staging runs that held its rows (of a cut close: as the ingest seconds);
 *     deleted once the file is committed
 */
@Internal
public record ClosedFile(
    int table,
    DataFile file,
    PartitionSpec spec,
    CloseReason reason,
    long bufferedBytes,
    long minIngestMillis,
    long maxIngestMillis,
    long closedAtMillis,
    Map<Long, Long> ingestSecondCounts,
    List<String> consumedStaging) {

  public ClosedFile {
    Objects.requireNonNull(spec, "a closed file's partition spec");
    ingestSecondCounts = Map.copyOf(ingestSecondCounts);
    consumedStaging = List.copyOf(consumedStaging);
  }
}
