package org.spatialingest.table;

import java.util.Map;

/**
 * Keys this sink writes into every Iceberg snapshot summary, so freshness and file sizing can be
 * audited from the table alone. Stable: {@code inspect}, {@code verify} and the writer's
 * encoded-ratio seed read them.
 */
public final class SnapshotSummaryKeys {
  public static final String PREFIX = "spatial-ingest.";

  /** digest of the batch's file paths: the idempotency key checked before every (re)commit */
  public static final String BATCH_ID = PREFIX + "batch-id";

  /**
   * the sink lineage: one id per job state history, kept across restores, new on a stateless start
   */
  public static final String LINEAGE = PREFIX + "lineage";

  /** on a reconciliation snapshot: the batch ids whose files it removed */
  public static final String REVERTED_BATCHES = PREFIX + "reverted-batches";

  public static final String FLINK_JOB_ID = PREFIX + "flink-job-id";
  public static final String CHECKPOINT_ID = PREFIX + "checkpoint-id";
  public static final String ROWS = PREFIX + "rows";
  public static final String FILES = PREFIX + "files";
  public static final String FILE_BYTES = PREFIX + "file-bytes";
  public static final String BUFFERED_BYTES = PREFIX + "buffered-bytes";
  public static final String MIN_INGEST_MS = PREFIX + "min-ingest-ms";
  public static final String MAX_INGEST_MS = PREFIX + "max-ingest-ms";

  /**
   * on the primary table: per Kafka partition, the offset below which every record of it is
   * committed in the table or its rejects table, in the format {@link #POSITIONS_FORMAT} names
   * ({@link TablePositions} owns it)
   */
  public static final String POSITIONS = PREFIX + "positions";

  /** the format of {@link #POSITIONS}; absent: format 1 (see {@link TablePositions}) */
  public static final String POSITIONS_FORMAT = PREFIX + "positions-format";

  /**
   * on the first commit of a sink lineage whose start did not apply some recorded positions: what
   * was reset and why (a topic created again under its name: both topic ids; another cluster: both
   * cluster ids and the {@code kafka.reset-positions} rule the user chose), one line per case
   */
  public static final String POSITIONS_RESET = PREFIX + "positions-reset";

  /**
   * on the commit after records the job needed were found deleted from Kafka ({@code kafka.on-gap:
   * continue}): {@code <topic>/<partition>:<first missing>..<last missing>}, comma separated
   */
  public static final String GAPS = PREFIX + "gaps";

  /** on the same commit: how many records those gaps lost in all */
  public static final String GAP_RECORDS = PREFIX + "gap-records";

  /**
   * on the primary table, for a file source ({@code source: file:<path>}): the location of the
   * Puffin file that holds the fingerprints of every input file the sink read ({@link FileInputs})
   */
  public static final String FILE_INPUTS = PREFIX + "file-inputs";

  /**
   * on the first commit of a sink lineage that recognised input files as files it had read under
   * another path: how many ({@code <new path> <- <old path>} each in the log and in {@link
   * #FILE_INPUTS})
   */
  public static final String FILES_MOVED = PREFIX + "files-moved";

  /**
   * on the same commit: how many input files ended in a line without a newline that was held back
   * ({@code source.file.last-line: hold}), read by a later run once it ends
   */
  public static final String LINES_HELD = PREFIX + "lines-held";

  /**
   * on an empty snapshot that records a gap the Kafka reader went past while running ({@code
   * kafka.on-gap: continue}; with {@link #GAPS} and {@link #GAP_RECORDS}): the sink whose reader
   * met it
   */
  public static final String GAP_SINK = PREFIX + "gap-sink";

  /** followed by a close reason code: how many files of the snapshot closed for that reason */
  public static final String CLOSED_PREFIX = PREFIX + "closed.";

  private SnapshotSummaryKeys() {}

  /**
   * Parquet bytes per buffered byte the sink measured for the batch of a snapshot ({@link
   * #FILE_BYTES} / {@link #BUFFERED_BYTES}), or 0 when the summary lacks them (not written by this
   * sink, or an empty batch).
   */
  public static double encodedPerBufferedByte(Map<String, String> summary) {
    String buffered = summary == null ? null : summary.get(BUFFERED_BYTES);
    String written = summary == null ? null : summary.get(FILE_BYTES);
    if (buffered == null || written == null) {
      return 0;
    }
    long b = Long.parseLong(buffered);
    long w = Long.parseLong(written);
    return b > 0 && w > 0 ? (double) w / b : 0;
  }
}
