package org.spatialingest.source;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.impl.StreamFormatAdapter;
import org.apache.flink.connector.file.src.reader.BulkFormat;
import org.apache.flink.connector.file.src.reader.SimpleStreamFormat;
import org.apache.flink.connector.file.src.reader.StreamFormat;
import org.apache.flink.connector.file.src.util.RecordAndPosition;
import org.apache.flink.core.fs.FSDataInputStream;
import org.spatialingest.table.SourceKeys;

/**
 * Newline-delimited records of a file as {@link SourceRecord}s carrying the file path and the
 * 1-based line number. Lines end at {@code \n} ({@code \r\n} too); blank lines are not records.
 * Values stay bytes (any encoding problem is the transform's to report). Files are not split, so
 * line numbers are exact; after a restore Flink re-reads the file and skips the records already
 * emitted (the reader counts lines as it goes, so numbers stay right).
 *
 * <p>A {@link BulkFormat} around a {@link SimpleStreamFormat} only to learn each split's path,
 * which a stream format does not see.
 */
public final class LineRecordFormat implements BulkFormat<SourceRecord, FileSourceSplit> {
  private final StreamFormatAdapter<SourceRecord> lines = new StreamFormatAdapter<>(new Lines());

  @Override
  public Reader<SourceRecord> createReader(Configuration config, FileSourceSplit split)
      throws IOException {
    return withPath(lines.createReader(config, split), split);
  }

  @Override
  public Reader<SourceRecord> restoreReader(Configuration config, FileSourceSplit split)
      throws IOException {
    return withPath(lines.restoreReader(config, split), split);
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
    @Override
    public StreamFormat.Reader<SourceRecord> createReader(
        Configuration config, FSDataInputStream stream) {
      return new LineReader(stream);
    }

    @Override
    public TypeInformation<SourceRecord> getProducedType() {
      return TypeInformation.of(SourceRecord.class);
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
        if (c != ' ' && c != '\t' && c != '\r') {
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
