package org.spatialingest.sink.core;

import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionSpec;

/**
 * One data file a writer closed, with what the commit and its snapshot summary need to know about
 * it.
 *
 * @param table index of the sink table the file belongs to
 * @param file the data file
 * @param spec the partition spec it was written with ({@code null} only for a file restored from a
 *     state of the previous release, which is committed on restore and never checkpointed again)
 * @param reason why it closed
 * @param bufferedBytes serialized bytes of its rows as they were buffered (to learn the encoding
 *     ratio)
 * @param minIngestMillis oldest ingest (Kafka) timestamp of its rows
 * @param maxIngestMillis newest ingest timestamp of its rows
 * @param closedAtMillis when it was closed; bounds the duplicate check on recommit
 * @param ingestSecondCounts rows per ingest second (epoch seconds), for the row-age-at-commit
 *     histogram
 * @param consumedStaging staging runs that held its rows; deleted once the file is committed
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
    ingestSecondCounts = Map.copyOf(ingestSecondCounts);
    consumedStaging = List.copyOf(consumedStaging);
  }
}
