package org.spatialingest.source;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.config.InputConfig.FileLastLine;
import org.spatialingest.config.JobConfig;
import org.spatialingest.table.CommittedRecords;
import org.spatialingest.table.FileInputs;
import org.spatialingest.table.FileInputs.Fingerprint;
import org.spatialingest.table.KafkaIds;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SinkPositions;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;
import org.spatialingest.table.StartPositions;
import org.spatialingest.table.TablePositions;

/**
 * The start of a file source ({@code source: file:<path>}): what each input file is to the sink
 * that read files before ({@link FileInputs}), decided once where the job is built, at every start
 * and restore.
 *
 * <ul>
 *   <li>A path the sink read before whose bytes still start with the prefix it read: appended to
 *       (or unchanged); read on after its committed lines.
 *   <li>A path the sink read before that is shorter now, or whose first bytes differ: refused
 *       ({@link PositionsRefusedException}), naming the file and what changed; its committed lines
 *       are no longer its lines.
 *   <li>A new path that starts with the prefix of a file the sink read (the longest such): that
 *       file moved or copied; its committed lines are skipped (logged, counted in the summary's
 *       {@link SnapshotSummaryKeys#FILES_MOVED}).
 *   <li>A file whose last line has no newline: with {@code source.file.last-line: hold} this run
 *       reads up to its last newline only (logged, {@link SnapshotSummaryKeys#LINES_HELD}); with
 *       {@code read} it reads the whole file, and a later start refuses the file if it has grown
 *       past that line (its rest would be a truncated line already committed).
 * </ul>
 *
 * <p>A file whose lines this run would read are all committed already (its prefix unchanged, not
 * grown, every line of it in the tables: {@link #committedWhole}) is not handed to the readers at
 * all; the others are read and the resume filter drops what is committed.
 *
 * <p>Cost: each input file is read once here, sequentially, computing CRC-32C and CRC-32 (both
 * intrinsics) at a few offsets, noting where its last line ends on the way, and, for a file the
 * sink read before that has not grown, counting its lines: about the time of reading it from disk
 * or page cache (measured in operations.md). A new path is compared at the length of every file
 * read before that is not longer than it (one pass, one hash sample per distinct length).
 */
public final class FileStartCheck {
  private static final Logger LOG = LoggerFactory.getLogger(FileStartCheck.class);
  private static final int BUFFER = 256 * 1024;
  private static final int MAX_LISTED = 10;

  private FileStartCheck() {}

  /**
   * A start's decision ({@link #decide}) and, per file the sink read before (or that moved from
   * one), the lines of the prefix this run reads ({@link Lines}).
   */
  public record Start(StartPositions positions, Map<String, Lines> lines) {
    public Start {
      lines = Map.copyOf(lines);
    }
  }

  /**
   * The lines of the prefix a run reads of a file, numbered as the reader numbers them.
   *
   * @param last the number of its last line (0: none)
   * @param records how many of those lines are records (not blank)
   */
  public record Lines(long last, long records) {}

  /**
   * Checks the input files against the fingerprints of sink {@code config.sinkId()} in {@code
   * table} and writes the fingerprints this start's commits register.
   *
   * @param refuseChanged whether a changed file refuses the start ({@code source.skip-committed};
   *     without it every line is read again anyway)
   * @throws PositionsRefusedException naming every changed file
   */
  public static Start decide(JobConfig config, Table table, boolean refuseChanged) {
    String sinkId = config.sinkId();
    FileInputs recorded = FileInputs.none();
    SinkPositions positions = TablePositions.readSink(table, sinkId).orElse(null);
    if (positions != null) {
      Snapshot s = table.snapshot(positions.snapshotId());
      recorded = FileInputs.read(table, s);
    }
    boolean readLastLine = config.input().fileLastLine() == FileLastLine.READ;
    Map<String, Fingerprint> run = new TreeMap<>();
    Map<String, Lines> lines = new HashMap<>();
    List<String> refused = new ArrayList<>();
    int moved = 0;
    int held = 0;
    try {
      for (FileStatus file : list(new Path(config.input().filePath()))) {
        String path = file.getPath().toString();
        Fingerprint known = recorded.files().get(path);
        List<Fingerprint> candidates = new ArrayList<>();
        if (known == null) {
          for (Fingerprint f : recorded.files().values()) {
            if (f.length() > 0 && f.length() <= file.getLen()) {
              candidates.add(f);
            }
          }
        }
        // lines are counted only where every one can be committed: a file the sink read before
        // (or one it may have moved from) that has not grown since; one that grew is read anyway
        long size = file.getLen();
        boolean count =
            known != null
                ? known.length() == size
                : candidates.stream().anyMatch(c -> c.length() == size);
        Scan scan = scan(file, known, candidates, count);
        Fingerprint earlier = known;
        if (known != null) {
          String change = change(known, scan, file.getLen());
          if (change != null) {
            refused.add(path + ": " + change);
            continue;
          }
        } else {
          for (Fingerprint c : candidates) {
            Long h = scan.hashes.get(c.length());
            if (h != null
                && h == c.hash()
                && (earlier == null || c.length() > earlier.length())
                && change(c, scan, file.getLen()) == null) {
              earlier = c;
            }
          }
          if (earlier != null) {
            moved++;
            LOG.warn(
                "Input file {} starts with the {} bytes the sink read as {}: the same file moved (or copied); its "
                    + "committed lines are skipped, the rest is read",
                path,
                earlier.length(),
                earlier.path());
          }
        }
        List<String> aliases = new ArrayList<>();
        if (earlier != null) {
          if (known == null) {
            aliases.add(SourceKeys.file(earlier.path()));
          }
          aliases.addAll(earlier.aliases());
        }
        long length = readLastLine || scan.terminated ? file.getLen() : scan.lastNewlineEnd;
        Long hashed = scan.hashes.get(length);
        if (hashed == null) {
          throw new IOException(path + " became shorter while the start check read it");
        }
        long hash = hashed;
        boolean terminated = length == 0 || length == scan.lastNewlineEnd;
        if (earlier != null && earlier.length() > length) {
          // its unterminated last line was read before (source.file.last-line: read), unchanged
          length = earlier.length();
          hash = earlier.hash();
          terminated = earlier.terminated();
        } else if (length < file.getLen()) {
          held++;
          LOG.warn(
              "Input file {} ends in a line without a newline ({} bytes after byte {}): held back until it ends "
                  + "(source.file.last-line: hold); set source.file.last-line: read if the file is final",
              path,
              file.getLen() - length,
              length);
        }
        run.put(path, new Fingerprint(path, length, hash, terminated, aliases));
        if (earlier != null && scan.counted) {
          lines.put(path, length == scan.lastNewlineEnd ? scan.linesAtNewline : scan.linesAtEnd);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (!refused.isEmpty() && refuseChanged) {
      throw new PositionsRefusedException(
          refused.size()
              + " input file(s) changed other than by appending since sink "
              + sinkId
              + " read them into "
              + table.name()
              + ", so the lines it committed are no longer their lines: "
              + String.join("; ", refused.subList(0, Math.min(MAX_LISTED, refused.size())))
              + (refused.size() > MAX_LISTED ? "; ..." : "")
              + ". Nothing was read. Ways out: restore the file's earlier content; or move the new content aside "
              + "to a path of its own outside "
              + config.input().filePath()
              + " (read it as a new file in a job of its own); or use another sink.id (every file is read "
              + "again as new)");
    }
    Map<String, Fingerprint> merged = new HashMap<>(recorded.files());
    merged.putAll(run);
    FileInputs written = new FileInputs(merged);
    Map<String, String> notes = new LinkedHashMap<>();
    if (moved > 0) {
      notes.put(SnapshotSummaryKeys.FILES_MOVED, Integer.toString(moved));
    }
    if (held > 0) {
      notes.put(SnapshotSummaryKeys.LINES_HELD, Integer.toString(held));
    }
    return new Start(
        new StartPositions(
            sinkId,
            KafkaIds.unknown(),
            Map.of(),
            "",
            notes,
            new FileInputs(run),
            written.write(table, sinkId)),
        lines);
  }

  /**
   * The input files of {@code start} whose every line this run would read is in the tables already
   * ({@code committed}, under the file's path or an earlier one): unchanged since, and not grown
   * past what was committed. None of them needs reading: the resume filter would drop each line. A
   * file that grew, or of which some line is missing, is not among them: it is read and the filter
   * drops what is committed.
   *
   * @return their paths
   */
  public static Set<String> committedWhole(Start start, CommittedRecords committed) {
    Set<String> whole = new HashSet<>();
    start
        .lines()
        .forEach(
            (path, lines) -> {
              Fingerprint f = start.positions().files().files().get(path);
              List<String> keys = new ArrayList<>(1 + f.aliases().size());
              keys.add(SourceKeys.file(path));
              keys.addAll(f.aliases());
              if (committed.committedLines(keys, lines.last()) == lines.records()) {
                whole.add(path);
              }
            });
    return whole;
  }

  /** What changed in a file the sink read as {@code known}; null: only appended to, or nothing. */
  private static String change(Fingerprint known, Scan scan, long size) {
    if (size < known.length()) {
      return "it has "
          + size
          + " bytes, fewer than the "
          + known.length()
          + " the sink read (truncated or rewritten)";
    }
    Long now = scan.hashes.get(known.length());
    if (now == null || now != known.hash()) {
      return "its first "
          + known.length()
          + " bytes, which the sink read, are not the same (rewritten)";
    }
    if (!known.terminated() && size > known.length()) {
      return "its last line was read without a newline (source.file.last-line: read) and the file has grown "
          + "since, so that line was committed truncated";
    }
    return null;
  }

  /**
   * The hashes of a file's prefixes at the offsets a check needs, where its last line ends (and the
   * hash there), and, when counted, its lines up to there and up to its end.
   */
  private static final class Scan {
    final Map<Long, Long> hashes = new HashMap<>();
    long lastNewlineEnd;
    boolean terminated;
    boolean counted;
    Lines linesAtNewline;
    Lines linesAtEnd;
  }

  private static Scan scan(
      FileStatus file, Fingerprint known, List<Fingerprint> candidates, boolean countLines)
      throws IOException {
    FileSystem fs = file.getPath().getFileSystem();
    long size = file.getLen();
    Scan scan = new Scan();
    TreeSet<Long> offsets = new TreeSet<>();
    offsets.add(0L);
    offsets.add(size);
    if (known != null && known.length() <= size) {
      offsets.add(known.length());
    }
    candidates.forEach(c -> offsets.add(c.length()));
    CRC32C crc32c = new CRC32C();
    CRC32 crc32 = new CRC32();
    LineRecordFormat.LineCount counter = countLines ? new LineRecordFormat.LineCount() : null;
    byte[] buf = new byte[BUFFER];
    long pos = 0;
    long newlineEnd = 0;
    long newlineHash = FileInputs.hash(crc32c, crc32);
    boolean complete = true;
    try (InputStream in = fs.open(file.getPath())) {
      reading:
      for (long next : offsets) {
        while (pos < next) {
          int n = in.read(buf, 0, (int) Math.min(buf.length, next - pos));
          if (n < 0) {
            // shorter than listed: the missing offsets have no hash, so they differ
            complete = false;
            break reading;
          }
          int last = n - 1;
          while (last >= 0 && buf[last] != '\n') {
            last--;
          }
          if (last >= 0) {
            // the hash up to the last newline so far, on the way
            crc32c.update(buf, 0, last + 1);
            crc32.update(buf, 0, last + 1);
            newlineEnd = pos + last + 1;
            newlineHash = FileInputs.hash(crc32c, crc32);
            crc32c.update(buf, last + 1, n - last - 1);
            crc32.update(buf, last + 1, n - last - 1);
          } else {
            crc32c.update(buf, 0, n);
            crc32.update(buf, 0, n);
          }
          if (counter != null) {
            counter.add(buf, n);
          }
          pos += n;
        }
        scan.hashes.put(next, FileInputs.hash(crc32c, crc32));
      }
    }
    scan.lastNewlineEnd = newlineEnd;
    scan.terminated = newlineEnd == size;
    if (complete) {
      scan.hashes.put(newlineEnd, newlineHash);
      if (counter != null) {
        scan.counted = true;
        scan.linesAtNewline = new Lines(counter.lines(), counter.records());
        scan.linesAtEnd =
            scan.terminated
                ? scan.linesAtNewline
                : new Lines(counter.lines() + 1, counter.records() + (counter.inRecord() ? 1 : 0));
      }
    }
    return scan;
  }

  /**
   * The files Flink's file source reads for {@code path}, as it names them: the file itself, or
   * every file under the directory, recursively, skipping names starting with {@code .} or {@code
   * _} (its default filter).
   */
  static List<FileStatus> list(Path path) throws IOException {
    FileSystem fs = path.getFileSystem();
    List<FileStatus> files = new ArrayList<>();
    add(fs, fs.getFileStatus(path), files);
    return files;
  }

  private static void add(FileSystem fs, FileStatus status, List<FileStatus> files)
      throws IOException {
    String name = status.getPath().getName();
    if (name.startsWith(".") || name.startsWith("_")) {
      return;
    }
    if (status.isDir()) {
      for (FileStatus child : fs.listStatus(status.getPath())) {
        add(fs, child, files);
      }
    } else {
      files.add(status);
    }
  }
}
