package org.spatialingest.sink.commit;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.spatialingest.sink.core.ClosedFile;
import org.spatialingest.sink.core.ClosedFileManifests.AppendableGroup;
import org.spatialingest.sink.core.ClosedFiles;
import org.spatialingest.sink.core.SinkFieldTotals;

/**
 * A batch's closed files of one table, as the commit needs them: their count, rows and bytes, the
 * sink's fields of each (close reason, ingest times, staging runs) and either the writers'
 * manifests as an append adopts them ({@link #appendable}) or, for groups of an earlier layout, the
 * decoded data files. Building it decodes no data file where every group of the table is
 * appendable.
 *
 * @param fields the files' sink fields, summed
 * @param appendable the writers' manifests, or {@code null} if {@code decoded}
 * @param decoded the files decoded, or {@code null} if {@code appendable}
 */
@Internal
record TableFiles(
    int table,
    SinkFieldTotals fields,
    List<AppendableGroup> appendable,
    List<ClosedFile> decoded,
    long rows,
    long bytes) {

  int count() {
    return fields.files();
  }

  boolean isEmpty() {
    return fields.files() == 0;
  }

  /** The batch's files per table index; decodes only the groups of tables not all appendable. */
  static Map<Integer, TableFiles> of(ClosedFiles closed) {
    Map<Integer, List<AppendableGroup>> appendable = new TreeMap<>();
    Map<Integer, Boolean> allAppendable = new TreeMap<>();
    for (ClosedFiles.GroupForAppend g : closed.forAppend()) {
      allAppendable.merge(g.table(), g.appendable() != null, Boolean::logicalAnd);
      if (g.appendable() != null) {
        appendable.computeIfAbsent(g.table(), t -> new ArrayList<>()).add(g.appendable());
      }
    }
    Map<Integer, TableFiles> byTable = new TreeMap<>();
    List<ClosedFile> decoded = allAppendable.containsValue(false) ? closed.files() : List.of();
    allAppendable.forEach(
        (table, all) ->
            byTable.put(table, all ? of(table, appendable.get(table)) : decoded(table, decoded)));
    return byTable;
  }

  /**
   * The same files decoded (for a table whose format cannot adopt the writers' manifests as they
   * are).
   */
  List<ClosedFile> decodedFrom(ClosedFiles closed) {
    return decoded != null ? decoded : decoded(table, closed.files()).decoded();
  }

  private static TableFiles of(int table, List<AppendableGroup> groups) {
    SinkFieldTotals fields = new SinkFieldTotals();
    long rows = 0;
    long bytes = 0;
    for (AppendableGroup g : groups) {
      fields.addAll(g.sinkFields());
      rows += g.header().rows();
      bytes += g.header().fileBytes();
    }
    return new TableFiles(table, fields, groups, null, rows, bytes);
  }

  private static TableFiles decoded(int table, List<ClosedFile> all) {
    List<ClosedFile> files = all.stream().filter(f -> f.table() == table).toList();
    SinkFieldTotals fields = new SinkFieldTotals();
    files.forEach(fields::add);
    return new TableFiles(
        table,
        fields,
        null,
        files,
        files.stream().mapToLong(f -> f.file().recordCount()).sum(),
        files.stream().mapToLong(f -> f.file().fileSizeInBytes()).sum());
  }

  static TableFiles none(int table) {
    return new TableFiles(table, new SinkFieldTotals(), null, List.of(), 0, 0);
  }
}
