package org.spatialingest.source;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.impl.StreamFormatAdapter;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.FSDataInputStream;
import org.spatialingest.table.FileInputs;
import org.spatialingest.table.FileInputs.Fingerprint;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SourceKeys;

/**
 * Newline-delimited records of a file as {@link SourceRecord}s carrying the file path and the
 * 1-based line number. Lines end at {@code \n} ({@code \r\n} too); blank lines are not records.
 * Values stay bytes (any encoding problem is the transform's to report). Files are not split, so
 * line numbers are exact; after a restore Flink re-reads the file and skips the records already
 * emitted (the reader counts lines as it goes, so numbers stay right).
 *
 * <p>With a plan from {@link FileStartCheck}, each file is read up to the prefix the check fixed
 * (so a last line without a newline is read only when the check says so), and its bytes must hash
 * as the check saw them.
 *
 * <p>A {@link BulkFormat} around a {@link SimpleStreamFormat} only to learn each split's path,
 * which a stream format does not see.
 */
public final class LineRecordFormat implements BulkFormat<SourceRecord, FileSourceSplit> {
  /** per path, the prefix to read ({@link FileStartCheck}); empty: every file whole */
  private final FileInputs plan;

  /** Reads every file whole (no start check). */
  public LineRecordFormat() {
    this(FileInputs.none());
  }

  /**
   * Reads of each file exactly the prefix {@code plan} names (its length; a file it does not name
   * is refused), and fails the job ({@link PositionsRefusedException}) if those bytes do not hash
   * as the start check saw them: the file changed while the job ran.
   */
  public LineRecordFormat(FileInputs plan) {
    this.plan = plan;
  }

  @Override
  public Reader<SourceRecord> createReader(Configuration config, FileSourceSplit split)
      throws IOException {
    return withPath(lines(split).createReader(config, split), split);
  }

  @Override
  public Reader<SourceRecord> restoreReader(Configuration config, FileSourceSplit split)
      throws IOException {
    return withPath(lines(split).restoreReader(config, split), split);
  }

  private StreamFormatAdapter<SourceRecord> lines(FileSourceSplit split) {
    if (plan.isEmpty()) {
      return new StreamFormatAdapter<>(new Lines(null));
    }
    String path = split.path().toString();
    Fingerprint expected = plan.files().get(path);
    if (expected == null) {
      throw new PositionsRefusedException(
          "input file "
              + path
              + " appeared after the job's start check, which did not see it: start the job again (it is "
              + "read then)");
    }
    return new StreamFormatAdapter<>(new Lines(expected));
  }

  @Override
  public boolean isSplittable() {
    return false;
  }

  @Override
  public TypeInformation<SourceRecord> getProducedType() {
    return TypeInformation.of(SourceRecord.class);
  }

  private static Reader<SourceRecord> withPath(Reader<SourceRecord> reader, FileSourceSplit split) {
    String path = split.path().toString();
    String sourceKey = SourceKeys.file(path);
    return new Reader<>() {
      @Override
      public RecordIterator<SourceRecord> readBatch() throws IOException {
        RecordIterator<SourceRecord> batch = reader.readBatch();
        if (batch == null) {
          return null;
        }
        return new RecordIterator<>() {
          @Override
          public RecordAndPosition<SourceRecord> next() {
            RecordAndPosition<SourceRecord> next = batch.next();
            if (next != null) {
              next.getRecord().file = path;
              next.getRecord().source = sourceKey;
            }
            return next;
          }

          @Override
          public void releaseBatch() {
            batch.releaseBatch();
          }
        };
      }

      @Override
      public void close() throws IOException {
        reader.close();
      }
    };
  }

  /** Reads lines as bytes, counting them. */
  static final class Lines extends SimpleStreamFormat<SourceRecord> {
    private final Fingerprint expected;

    Lines(Fingerprint expected) {
      this.expected = expected;
    }

    @Override
    public StreamFormat.Reader<SourceRecord> createReader(
        Configuration config, FSDataInputStream stream) throws IOException {
      return new LineReader(
          expected == null ? stream : new PrefixStream(stream, stream.getPos(), expected));
    }

    @Override
    public TypeInformation<SourceRecord> getProducedType() {
      return TypeInformation.of(SourceRecord.class);
    }
  }

  /**
   * The first {@code expected.length()} bytes of a file, hashed as they are read; at their end (or
   * an earlier end of file) the hash must be the start check's.
   */
  static final class PrefixStream extends InputStream {
    private final InputStream in;
    private final Fingerprint expected;
    private final CRC32C crc32c = new CRC32C();
    private final CRC32 crc32 = new CRC32();
    private long read;
    private boolean verified;

    /**
     * @param start where {@code in} is; from anywhere but 0 the bytes are limited, not checked
     */
    PrefixStream(InputStream in, long start, Fingerprint expected) {
      this.in = in;
      this.expected = expected;
      this.read = start;
      this.verified = start != 0;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      long left = expected.length() - read;
      int n = left <= 0 ? -1 : in.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        crc32c.update(b, off, n);
        crc32.update(b, off, n);
        read += n;
      }
      if (n < 0 || read == expected.length()) {
        verify();
      }
      return n;
    }

    private void verify() {
      if (verified) {
        return;
      }
      verified = true;
      if (read != expected.length() || FileInputs.hash(crc32c, crc32) != expected.hash()) {
        throw new PositionsRefusedException(
            "input file "
                + expected.path()
                + " changed while the job read it: its first "
                + expected.length()
                + " bytes are not those the start check saw"
                + (read < expected.length() ? " (it has only " + read + ")" : "")
                + ". Lines of it may be committed from either content; start the job again: its start check "
                + "then names what changed");
      }
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  /** Whether a byte may be part of a blank line (one that is not a record). */
  private static boolean blank(byte b) {
    return b == ' ' || b == '\t' || b == '\r';
  }

  /**
   * Counts the lines of bytes fed in order as the reader numbers them: every {@code \n} ends one,
   * and a line of only blank bytes is not a record ({@link FileStartCheck} counts a file's lines as
   * it reads it).
   */
  static final class LineCount {
    private static final VarHandle LONGS =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long NEWLINES = 0x0A0A0A0A0A0A0A0AL;
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    private long lines;
    private long records;

    /** whether the line not yet ended has a byte other than blank ones */
    private boolean content;

    void add(byte[] buf, int n) {
      int i = 0;
      while (i < n) {
        if (!content) {
          // a line's start, or blank bytes so far: byte by byte
          byte b = buf[i++];
          if (b == '\n') {
            lines++;
          } else if (!blank(b)) {
            content = true;
          }
          continue;
        }
        // a record: on to its newline, eight bytes at a time
        while (i + 8 <= n) {
          long x = (long) LONGS.get(buf, i) ^ NEWLINES;
          long zero = (x - ONES) & ~x & HIGHS; // its lowest bit marks the first '\n'
          if (zero != 0) {
            i += Long.numberOfTrailingZeros(zero) >>> 3;
            break;
          }
          i += 8;
        }
        while (i < n && buf[i] != '\n') {
          i++;
        }
        if (i < n) {
          lines++;
          records++;
          content = false;
          i++;
        }
      }
    }

    /** lines ended so far */
    long lines() {
      return lines;
    }

    /** of them, records */
    long records() {
      return records;
    }

    /** whether the line not ended yet is a record so far */
    boolean inRecord() {
      return content;
    }
  }

  static final class LineReader implements StreamFormat.Reader<SourceRecord> {
    private final InputStream in;
    private final byte[] buf = new byte[64 * 1024];
    private int pos;
    private int limit;
    private long line;
    private boolean eof;

    LineReader(InputStream in) {
      this.in = in;
    }

    @Override
    public SourceRecord read() throws IOException {
      while (true) {
        byte[] value = nextLine();
        if (value == null) {
          return null;
        }
        line++;
        if (!isBlank(value)) {
          return SourceRecord.fromFile(value, null, line, System.currentTimeMillis());
        }
      }
    }

    private byte[] nextLine() throws IOException {
      byte[] out = null;
      int outLen = 0;
      while (true) {
        if (pos == limit) {
          if (eof || !fill()) {
            return out == null ? null : trimCr(out, outLen);
          }
        }
        int start = pos;
        while (pos < limit && buf[pos] != '\n') {
          pos++;
        }
        int n = pos - start;
        if (out == null) {
          out = new byte[Math.max(n, 64)];
        } else if (outLen + n > out.length) {
          out = Arrays.copyOf(out, Math.max(outLen + n, out.length * 2));
        }
        System.arraycopy(buf, start, out, outLen, n);
        outLen += n;
        if (pos < limit) { // found the newline
          pos++;
          return trimCr(out, outLen);
        }
      }
    }

    private boolean fill() throws IOException {
      int n = in.read(buf, 0, buf.length);
      if (n <= 0) {
        eof = true;
        return false;
      }
      pos = 0;
      limit = n;
      return true;
    }

    private static byte[] trimCr(byte[] b, int len) {
      if (len > 0 && b[len - 1] == '\r') {
        len--;
      }
      return Arrays.copyOf(b, len);
    }

    private static boolean isBlank(byte[] b) {
      for (byte c : b) {
        if (!blank(c)) {
          return false;
        }
      }
      return true;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }
}
