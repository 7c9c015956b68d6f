package org.spatialingest.source;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.flink.api.common.io.compression.InflaterInputStreamFactory;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.compression.StandardDeCompressors;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.spatialingest.table.SourceKeys;

/**
 * A bounded sample of the records of a file source's input ({@code source: file:<path>}), read
 * where the job is built: the same files the {@link TelemetrySources#file file source} reads
 * (Flink's own enumerator of a non-splittable format, so the same hidden-file rules), split into
 * records by the job's own line reader ({@link LineRecordFormat}).
 *
 * <p>Bounds: at most {@link #RECORDS} records and about {@link #BYTES} bytes read. A plain input of
 * at most {@link #BYTES} is read whole and {@link #RECORDS} of its records are kept, each equally
 * likely. A larger one is read at {@link #PROBES} places at equal steps through all its bytes (the
 * files in path order, as if one), each probe skipping the line it lands in and reading up to its
 * share of records and bytes: every part of the input is sampled by its size, so a backfill of many
 * files sorted by time is sampled across all its days and areas, not from its first file; the steps
 * are at least a probe's bytes apart, and a probe that lands in what the one before it read (a line
 * longer than a step) is left out, so no line is read twice. Probes cost one open and seek each (a
 * few seconds on an object store at worst), and stop after {@link #MAX_MILLIS}. A compressed file
 * (decompressed by its extension, as the file source does) cannot seek: the probes that land in it
 * read its start instead, and an input with one is never read whole; its bytes count as compressed,
 * so the records estimate of such an input is low by the compression ratio.
 */
public final class FileSample {
  /**
   * Records kept: as many keys as a placement subtask's own fallback sample ({@code
   * distribution/KeySample}), enough for the coordinator's 1,024 quantiles per partition over the
   * few partitions a bounded input usually spans.
   */
  public static final int RECORDS = 4_096;

  /** Bytes read at most (about: a probe finishes the line it is in). */
  public static final long BYTES = 8L << 20;

  /** Places a large input is read at: a probe every 1/64 of its bytes. */
  public static final int PROBES = 64;

  /**
   * Probing stops once it has read this much, with the lines it skipped: a probe that lands in a
   * line of many megabytes reads the rest of it to skip it.
   */
  public static final long MAX_CONSUMED_BYTES = 4 * BYTES;

  /** Probing stops after this long (a slow store), with what it has read. */
  public static final long MAX_MILLIS = 10_000;

  private FileSample() {}

  /**
   * The sample.
   *
   * @param records the sampled records, as the file source emits them (read time as timestamp;
   *     after a probe's seek, line numbers count from where it started)
   * @param estimatedRecords how many records the whole input holds: counted when read whole, else
   *     the records read scaled by input bytes / bytes read
   * @param files the input's files
   * @param inputBytes their bytes
   * @param bytesRead bytes read for the sample
   */
  public record Sample(
      List<SourceRecord> records,
      long estimatedRecords,
      int files,
      long inputBytes,
      long bytesRead) {}

  /** Samples the file or directory {@code path}, as {@link TelemetrySources#file} reads it. */
  public static Sample read(String path) throws IOException {
    return read(path, Set.of());
  }

  /**
   * The same without the files {@code committedWhole} ({@link FileStartCheck#committedWhole}: this
   * run does not read them).
   */
  public static Sample read(String path, Set<String> committedWhole) throws IOException {
    List<FileSourceSplit> files =
        new ArrayList<>(
            TelemetrySources.files(committedWhole)
                .create()
                .enumerateSplits(new Path[] {new Path(path)}, 1));
    files.sort(Comparator.comparing(f -> f.path().toString()));
    long total = files.stream().mapToLong(FileSourceSplit::length).sum();
    boolean plain = files.stream().noneMatch(Lines::compressed);
    return plain && total <= BYTES ? whole(files, total) : probed(files, total);
  }

  /** Reads every record and keeps {@link #RECORDS} of them, each equally likely. */
  private static Sample whole(List<FileSourceSplit> files, long total) throws IOException {
    SplittableRandom random = new SplittableRandom(28);
    List<SourceRecord> kept = new ArrayList<>();
    long seen = 0;
    for (FileSourceSplit file : files) {
      try (Lines lines = new Lines(file, 0)) {
        SourceRecord r;
        while ((r = lines.next()) != null) {
          if (kept.size() < RECORDS) {
            kept.add(r);
          } else {
            long slot = random.nextLong(seen + 1);
            if (slot < RECORDS) {
              kept.set((int) slot, r);
            }
          }
          seen++;
        }
      }
    }
    return new Sample(kept, seen, files.size(), total, total);
  }

  /** Reads {@link #PROBES} stretches at equal steps through the input. */
  private static Sample probed(List<FileSourceSplit> files, long total) throws IOException {
    // {file, offset, probes}: the probes that land in one compressed file read its start, as one
    List<long[]> probes = new ArrayList<>();
    int file = 0;
    long fileStart = 0; // of files.get(file) in the input
    for (int probe = 0; probe < PROBES; probe++) {
      long at = (long) ((probe + 0.5) * total / PROBES);
      while (at >= fileStart + files.get(file).length()) {
        fileStart += files.get(file++).length();
      }
      long[] last = probes.isEmpty() ? null : probes.get(probes.size() - 1);
      boolean compressed = Lines.compressed(files.get(file));
      if (compressed && last != null && last[0] == file) {
        last[2]++;
      } else {
        probes.add(new long[] {file, compressed ? 0 : at - fileStart, 1});
      }
    }
    long deadline = System.currentTimeMillis() + MAX_MILLIS;
    List<SourceRecord> records = new ArrayList<>();
    long bytesRead = 0;
    long consumed = 0; // with the lines skipped
    long readUpTo = -1; // in the file of the previous probe
    for (int i = 0; i < probes.size(); i++) {
      long[] probe = probes.get(i);
      if (System.currentTimeMillis() >= deadline || consumed >= MAX_CONSUMED_BYTES) {
        break;
      }
      if (i > 0 && probes.get(i - 1)[0] == probe[0] && probe[1] < readUpTo) {
        continue; // landed in what the previous probe read (a line longer than a step)
      }
      try (Lines lines = new Lines(files.get((int) probe[0]), probe[1])) {
        long maxRecords = probe[2] * RECORDS / PROBES;
        long maxBytes = probe[2] * BYTES / PROBES;
        long read = 0;
        int n = 0;
        SourceRecord r;
        while (n < maxRecords && read < maxBytes && (r = lines.next()) != null) {
          records.add(r);
          read += r.value.length + 1;
          n++;
        }
        bytesRead += read;
        consumed += lines.position() - probe[1];
        readUpTo = lines.position();
      }
    }
    long estimated =
        bytesRead == 0 ? 0 : (long) Math.ceil(records.size() * (double) total / bytesRead);
    return new Sample(records, estimated, files.size(), total, bytesRead);
  }

  /** The records of one file from {@code offset} on (from the line after it, if not 0). */
  private static final class Lines implements AutoCloseable {
    private final LineRecordFormat.LineReader reader;
    private final String file;
    private final String sourceKey;
    private boolean skipFirst;

    /** where the next line starts (about: a line's {@code \r} and blank lines are not counted) */
    private long position;

    Lines(FileSourceSplit split, long offset) throws IOException {
      FSDataInputStream in = split.path().getFileSystem().open(split.path());
      InflaterInputStreamFactory<?> inflater = inflater(split);
      if (inflater != null) {
        this.reader = new LineRecordFormat.LineReader(inflater.create(in));
      } else {
        if (offset > 0) {
          in.seek(offset);
        }
        this.reader = new LineRecordFormat.LineReader(in);
        this.skipFirst = offset > 0;
      }
      this.file = split.path().toString();
      this.sourceKey = SourceKeys.file(file);
      this.position = inflater == null ? offset : 0;
    }

    long position() {
      return position;
    }

    /** As the file source decompresses a file, by its name's extension; null for plain text. */
    private static InflaterInputStreamFactory<?> inflater(FileSourceSplit split) {
      return StandardDeCompressors.getDecompressorForFileName(split.path().getName());
    }

    /** A compressed file cannot seek: it is read from its start, once. */
    static boolean compressed(FileSourceSplit split) {
      return inflater(split) != null;
    }

    /** The next record, or null at the end of the file. */
    SourceRecord next() throws IOException {
      if (skipFirst) {
        skipFirst = false;
        SourceRecord rest = reader.read(); // of the line the probe landed in
        if (rest == null) {
          return null;
        }
        position += rest.value.length + 1;
      }
      SourceRecord r = reader.read();
      if (r != null) {
        position += r.value.length + 1;
        r.file = file;
        r.source = sourceKey;
      }
      return r;
    }

    @Override
    public void close() throws IOException {
      reader.close();
    }
  }
}
