package org.spatialingest.sink.core;

import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * What a writer subtask sends downstream at every checkpoint barrier (its write result; the
 * aggregator turns the reports of all writers into one {@code commit.FileBatch}, the committable).
 *
 * @param writerToken the writer instance's token; every file it writes carries it (orphan clean-up
 *     after a restore)
 * @param closed files closed since the previous barrier (encoded once, passed on as bytes)
 * @param seen per source key, one past the highest position this writer has received so far
 * @param buffered per source key, the lowest position among rows still buffered (not in a closed
 *     file) by this writer
 */
@Internal
public record WriterReport(
    String writerToken, ClosedFiles closed, Map<String, Long> seen, Map<String, Long> buffered) {
  public WriterReport {
    seen = Map.copyOf(seen);
    buffered = Map.copyOf(buffered);
  }

  public WriterReport(
      String writerToken,
      List<ClosedFile> closed,
      Map<String, Long> seen,
      Map<String, Long> buffered) {
    this(writerToken, ClosedFiles.of(closed), seen, buffered);
  }
}
