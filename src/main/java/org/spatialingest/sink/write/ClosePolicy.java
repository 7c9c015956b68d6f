package org.spatialingest.sink.write;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.spatialingest.sink.core.CloseReason;
import org.spatialingest.sink.options.ClosePolicyKind;
import org.spatialingest.sizing.SizingBounds;

/**
 * The one owner of when a writer closes a file and which buffers go into it: every {@link
 * CloseReason} is decided here, and the packing of a partition's buffers into files. The writer
 * asks after every row ({@link #targetReached}, {@link #partitionLimitExceeded}, {@link
 * #memoryFull}; one comparison each), at every barrier ({@link #atBarrier}) and at the end of input
 * ({@link #atEndOfInput}), and writes what it is told. {@link SizingBounds} holds the arithmetic of
 * M, T, L and C it shares with {@code plan}.
 *
 * <ul>
 *   <li>{@code bytes}: a buffer that would encode to T closes at once, between barriers, and at a
 *       barrier alone.
 *   <li>parking (not a close): more buffers open than allowed ({@code sink.max-open-partitions}):
 *       the least recently written (never the one just written) is <em>parked</em>: its rows go to
 *       their staging run and leave memory, and it closes later by one of the reasons here, written
 *       once from its runs and the rows that arrived since, so an input that interleaves many time
 *       partitions (a backfill in id order) still gets files of T.
 *   <li>{@code partition_limit}: more buffers parked than allowed ({@code
 *       sink.max-parked-partitions}; 0: none may be parked): the least recently written parked
 *       buffer (or, with none parked, open buffer) closes.
 *   <li>{@code memory}: the writer's in-flight bytes reached M: the buffer with the most bytes in
 *       memory closes, until it is under M; and a buffer with parked rows closes when its rows, in
 *       memory and parked, reach M (more could not be read back within M to write the file).
 *       Reading parked rows back counts against M: before it, other buffers are parked until the
 *       read fits ({@link #makeRoomFor}).
 *   <li>{@code latency} ({@code bounded}): at a barrier, a buffer whose oldest row's age plus its
 *       expected write time reaches L - C closes, and with it the partition's other buffers on this
 *       writer, packed.
 *   <li>{@code checkpoint} ({@code every-checkpoint}, Iceberg's own behaviour): every barrier
 *       closes every buffer, packed.
 *   <li>{@code end_of_input}: every buffer closes, packed.
 * </ul>
 *
 * <p>Packing (a close of several buffers of a partition: L, every checkpoint, end of input): the
 * partition's buffers on this writer (its key ranges, adjacent, in key order) are one group, as
 * long as their bytes stay within M, and a group is written as about bytes / (what encodes to T)
 * files ({@link #filesFor}: Iceberg's rule for the files of a rewrite) cut in key order: its rows
 * merged by Hilbert key, each file a contiguous span of about the same bytes ({@link Close#files}).
 * So a latency close makes as few files as its bytes need, however many ranges the writer holds and
 * however their bytes fall, and each file covers one compact area.
 */
@Internal
public final class ClosePolicy implements Serializable {
  private static final long serialVersionUID = 1L;

  /**
   * Assumed write cost until a writer has written a file: 100 ns per buffered byte (10 MB/s for
   * sort, Parquet encoding and zstd on a loaded core), deliberately pessimistic — the first latency
   * close must not be late.
   */
  static final double DEFAULT_WRITE_NANOS_PER_BYTE = 100;

  /** Iceberg's default minimum file size of a rewrite, as a share of T ({@link #filesFor}). */
  static final double MIN_FILE_OF_TARGET = 0.75;

  /** The most a file may hold when a rewrite spreads a remainder over the others, of T. */
  static final double MAX_SPREAD_FILE_OF_TARGET = 1.1;

  private final ClosePolicyKind kind;
  private final SizingBounds bounds;
  private final int maxOpenPartitions;
  private final int maxParkedPartitions;

  /** As {@link #ClosePolicy(ClosePolicyKind, SizingBounds, int, int)} with no parking. */
  public ClosePolicy(ClosePolicyKind kind, SizingBounds bounds, int maxOpenPartitions) {
    this(kind, bounds, maxOpenPartitions, 0);
  }

  /**
   * @param maxOpenPartitions buffers a writer holds in memory per table
   * @param maxParkedPartitions buffers a writer may park per table beyond those (0: none)
   */
  public ClosePolicy(
      ClosePolicyKind kind, SizingBounds bounds, int maxOpenPartitions, int maxParkedPartitions) {
    if (maxOpenPartitions <= 0) {
      throw new IllegalArgumentException("maxOpenPartitions must be > 0");
    }
    if (maxParkedPartitions < 0) {
      throw new IllegalArgumentException("maxParkedPartitions must be >= 0");
    }
    this.kind = kind;
    this.bounds = bounds;
    this.maxOpenPartitions = maxOpenPartitions;
    this.maxParkedPartitions = maxParkedPartitions;
  }

  int maxOpenPartitions() {
    return maxOpenPartitions;
  }

  int maxParkedPartitions() {
    return maxParkedPartitions;
  }

  /** L, the freshness bound. */
  long maxLatencyMillis() {
    return bounds.maxLatency().toMillis();
  }

  /** What the policy needs to know about a buffer. */
  interface Candidate {
    /** serialized bytes of its rows */
    long bytes();

    /** ingest time of its oldest row */
    long minIngestMillis();

    /** bytes of its rows held in memory (all of them unless it was parked) */
    default long memoryBytes() {
      return bytes();
    }
  }

  /**
   * What to write: consecutive buffers of one partition (in key order), as {@code files} files cut
   * in key order, each about the same bytes (1: one file of all their rows), and why.
   */
  record Close<B>(List<B> buffers, CloseReason reason, int files) {
    Close {
      if (files < 1) {
        throw new IllegalArgumentException("a close writes at least one file, was " + files);
      }
    }

    /** One file of all the buffers' rows. */
    Close(List<B> buffers, CloseReason reason) {
      this(buffers, reason, 1);
    }
  }

  /**
   * The least share of a target file's buffered bytes a written file must hold for the writer to
   * learn the encoded ratio from it ({@link #learnsRatioFrom}).
   */
  static final double LEARN_RATIO_FROM_SHARE_OF_TARGET = 0.5;

  /**
   * Whether a written file of {@code bufferedBytes} is near enough to T for the writer to learn its
   * encoded / buffered ratio, the ratio T's buffered bytes are computed from: at least half of what
   * encodes to T at the current ratio. A file's Parquet footer and column metadata are about the
   * same bytes whatever its rows, so a small file (a tail closed at the end of input, by L or by
   * the partition limit) encodes at a far higher ratio than a file of T: 8,920 buffered bytes to
   * 10.4 KB where 62,440 encode to 33 KB ({@code ParkedBackfillTest}, T = 32 KB). Learned, a run of
   * such tails raised the ratio from 0.53 to 1.14 within one end of input, so a later close of
   * 38,356 buffered bytes (one file of 22.9 KB) was cut into two files under T/2. With a file of b
   * buffered bytes encoding to about a + r b (a the bytes every file adds), files of at least half
   * of T's bytes never teach a ratio above {@code r / (1 - 2 a / T)}, and learned at most that,
   * {@link #filesFor} does not cut into two files bytes that would encode to two files under T/2
   * (bytes of which r b + 2 a is under T). Until a file is learned the starting ratio holds.
   */
  boolean learnsRatioFrom(long bufferedBytes, double encodedPerBufferedByte) {
    return bufferedBytes
        >= LEARN_RATIO_FROM_SHARE_OF_TARGET
            * bounds.bufferedBytesForTargetFile(encodedPerBufferedByte);
  }

  /** {@code bytes}: whether a buffer would already encode to a full target file. */
  boolean targetReached(long bufferedBytes, double encodedPerBufferedByte) {
    return bufferedBytes >= bounds.bufferedBytesForTargetFile(encodedPerBufferedByte);
  }

  /** Whether the least recently written open buffer must leave memory (be parked or closed). */
  boolean partitionLimitExceeded(int openBuffers) {
    return openBuffers > maxOpenPartitions;
  }

  /**
   * {@code partition_limit}: whether, before another buffer is parked, one must close (the least
   * recently written parked one, or with none parked the least recently written open one).
   */
  boolean parkedLimitReached(int parkedBuffers) {
    return parkedBuffers >= maxParkedPartitions;
  }

  /** {@code memory}: whether the largest buffer must close. */
  boolean memoryFull(long inFlightBytes) {
    return bounds.memoryFull(inFlightBytes);
  }

  /**
   * {@code memory}, for a buffer with parked rows: whether its rows, in memory and parked, reached
   * M, so it closes (it could not be read back within M later).
   */
  boolean tooLargeToLoad(Candidate buffer) {
    return buffer.memoryBytes() < buffer.bytes() && bounds.memoryFull(buffer.bytes());
  }

  /**
   * Whether, before {@code loadBytes} of parked rows are read back to write a file, another buffer
   * must be parked to keep {@code inFlightBytes} plus the read under M.
   */
  boolean makeRoomFor(long inFlightBytes, long loadBytes) {
    return loadBytes > 0 && bounds.memoryFull(inFlightBytes + loadBytes);
  }

  /**
   * {@code memory}'s choice: the candidate with the most bytes in memory, or {@code null} if none
   * holds any.
   */
  <B extends Candidate> B largest(List<B> candidates) {
    B largest = null;
    for (B b : candidates) {
      if (b != null
          && b.memoryBytes() > 0
          && (largest == null || b.memoryBytes() > largest.memoryBytes())) {
        largest = b;
      }
    }
    return largest;
  }

  /**
   * The barrier's decision for one partition's buffers (in key order): a buffer at T closes alone;
   * when any other must close now (L, or every checkpoint), all the others close with it, packed.
   *
   * @param now the barrier's time
   * @param writeNanosPerByte the writer's measured write cost: a latency close must start that much
   *     earlier, since the write delays the barrier and the commit
   */
  <B extends Candidate> List<Close<B>> atBarrier(
      List<B> partition, long now, double encodedPerBufferedByte, double writeNanosPerByte) {
    List<Close<B>> closes = new ArrayList<>();
    List<B> rest = new ArrayList<>(partition.size());
    CloseReason restReason = null;
    for (B buffer : partition) {
      CloseReason reason;
      if (kind == ClosePolicyKind.EVERY_CHECKPOINT) {
        reason = CloseReason.CHECKPOINT;
      } else if (targetReached(buffer.bytes(), encodedPerBufferedByte)) {
        closes.add(new Close<>(List.of(buffer), CloseReason.BYTES));
        continue;
      } else {
        long writeMillis = (long) (writeNanosPerByte * buffer.bytes() / 1_000_000);
        long oldestAge = now - Math.min(now, buffer.minIngestMillis()) + writeMillis;
        reason = bounds.latencyDue(oldestAge) ? CloseReason.LATENCY : null;
      }
      rest.add(buffer);
      restReason = restReason == null ? reason : restReason;
    }
    if (restReason != null) {
      closes.addAll(pack(rest, restReason, encodedPerBufferedByte));
    }
    return closes;
  }

  /** {@code end_of_input}: every buffer of the partition closes, packed. */
  <B extends Candidate> List<Close<B>> atEndOfInput(
      List<B> partition, double encodedPerBufferedByte) {
    return pack(partition, CloseReason.END_OF_INPUT, encodedPerBufferedByte);
  }

  /**
   * Consecutive buffers into one group while their bytes stay within M (a group is read into memory
   * whole to be written), each group cut into {@link #filesFor} files of what encodes to T.
   */
  <B extends Candidate> List<Close<B>> pack(
      List<B> buffers, CloseReason reason, double encodedPerBufferedByte) {
    long limit = bounds.bufferedBytesForTargetFile(encodedPerBufferedByte);
    List<Close<B>> groups = new ArrayList<>();
    List<B> group = new ArrayList<>(buffers.size());
    long bytes = 0;
    for (B buffer : buffers) {
      if (!group.isEmpty() && bounds.memoryFull(bytes + buffer.bytes())) {
        groups.add(new Close<>(group, reason, filesFor(bytes, limit)));
        group = new ArrayList<>(buffers.size());
        bytes = 0;
      }
      group.add(buffer);
      bytes += buffer.bytes();
    }
    if (!group.isEmpty()) {
      groups.add(new Close<>(group, reason, filesFor(bytes, limit)));
    }
    return groups;
  }

  /**
   * How many files {@code bytes} are cut into, T being {@code limit} bytes: Iceberg's own rule for
   * the files a rewrite of that many bytes makes ({@code
   * SizeBasedFileRewritePlanner.expectedOutputFiles}, 1.11, with its default minimum file size of
   * 0.75 T): one below T; ceil(bytes / T) when the remainder would be a file of more than 0.75 T;
   * otherwise floor(bytes / T) if that spreads the remainder at no more than 1.1 T per file. So a
   * ratio learned a little high (the first files of a new table) does not add a file for a few
   * percent over T.
   */
  static int filesFor(long bytes, long limit) {
    if (bytes < limit) {
      return 1;
    }
    long floor = bytes / limit;
    long ceil = floor + (bytes % limit == 0 ? 0 : 1);
    boolean remainderIsAFile = bytes % limit > (long) (MIN_FILE_OF_TARGET * limit);
    long files =
        !remainderIsAFile && bytes / floor < MAX_SPREAD_FILE_OF_TARGET * limit ? floor : ceil;
    return (int) Math.min(Integer.MAX_VALUE, files);
  }
}
