package org.spatialingest.sink.core;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;

/**
 * What a writer subtask sends downstream at every checkpoint barrier (its write result; the
 * aggregator turns the reports of all writers into one {@code commit.FileBatch}, the committable).
 *
 * <p>Positions travel as what changed since the same writer instance's previous report ({@link
 * ReportedPositions} writes them, the aggregator applies them in order per writer token): a quiet
 * checkpoint costs the aggregator nothing per source. The first report of a writer instance is
 * {@code complete}.
 *
 * @param writerToken the writer instance's token; every file it writes carries it (orphan clean-up
 *     after a restore)
 * @param closed files closed since the previous barrier (encoded once, passed on as bytes)
 * @param receivedEnds per source key, one past the highest position this writer has received (its
 *     end, as Kafka's end offsets are one past the last record), for the keys where that grew since
 *     its previous report and the aggregator needs it: in a complete report every key; later, keys
 *     of files closed since the previous report and keys it no longer buffers. A key the writer
 *     still buffers may lag here: its lowest buffered position bounds what is committed anyway.
 * @param buffered per source key, the lowest position among rows still buffered (not in a closed
 *     file) by this writer: if {@code complete}, every such key (a key missing is not buffered);
 *     otherwise only the keys where it changed
 * @param unbuffered keys this writer buffered at its previous report and no longer does (empty if
 *     {@code complete})
 * @param complete {@code buffered} replaces what the aggregator knew of this writer
 */
@Internal
public record WriterReport(
    String writerToken,
    ClosedFiles closed,
    Map<String, Long> receivedEnds,
    Map<String, Long> buffered,
    Set<String> unbuffered,
    boolean complete) {
  public WriterReport {
    receivedEnds = Map.copyOf(receivedEnds);
    buffered = Map.copyOf(buffered);
    unbuffered = Set.copyOf(unbuffered);
    if (complete && !unbuffered.isEmpty()) {
      throw new IllegalArgumentException("a complete report lists no unbuffered keys");
    }
  }

  /** A complete report: every key's received and lowest buffered position. */
  public WriterReport(
      String writerToken,
      List<ClosedFile> closed,
      Map<String, Long> receivedEnds,
      Map<String, Long> buffered) {
    this(writerToken, ClosedFiles.of(closed), receivedEnds, buffered, Set.of(), true);
  }

  /** Position entries this report carries (received ends, buffered and unbuffered keys). */
  public int positionEntries() {
    return receivedEnds.size() + buffered.size() + unbuffered.size();
  }
}
