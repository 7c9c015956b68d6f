package org.spatialingest.sizing;

/**
 * A byte range of one input file that a read task scans.
 *
 * @param file index of the file in the {@link ScanInput}
 * @param offset first byte
 * @param length bytes in the range
 */
public record FileChunk(int file, long offset, long length) {
  public FileChunk {
    if (file < 0 || offset < 0 || length < 0) {
      throw new IllegalArgumentException(
          "bad chunk file=" + file + " offset=" + offset + " length=" + length);
    }
  }

  public long end() {
    return offset + length;
  }
}
