package org.spatialingest.sink.core;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Closed files on their way from the writer that closed them to the commit. Each group (one table
 * and partition spec) is encoded once, the first time it is serialized ({@link
 * ClosedFileManifests#encodeGroup}: an Iceberg manifest plus the sink's fields), and passed on as
 * those bytes: writer report → aggregator → committable → committer state and the network between
 * them copy them; the data files are decoded only where they are needed (the commit), once. Without
 * this, each hop wrote and read the manifests again (about a tenth of the sink's CPU at a 1 s
 * checkpoint interval). Immutable; a group's memoized forms are shared by the lists that hold it.
 *
 * <p>Binary form ({@link #write}): group count, then per group its byte length and bytes.
 */
@Internal
public final class ClosedFiles {
  private static final ClosedFiles NONE = new ClosedFiles(List.of());

  private final List<Group> groups;

  private ClosedFiles(List<Group> groups) {
    this.groups = List.copyOf(groups);
  }

  public static ClosedFiles none() {
    return NONE;
  }

  /** The files grouped by table and partition spec (in order of first appearance). */
  public static ClosedFiles of(List<ClosedFile> files) {
    Map<List<Integer>, List<ClosedFile>> byGroup = new LinkedHashMap<>();
    for (ClosedFile f : files) {
      byGroup.computeIfAbsent(List.of(f.table(), f.spec().specId()), k -> new ArrayList<>()).add(f);
    }
    List<Group> groups = new ArrayList<>(byGroup.size());
    for (List<ClosedFile> group : byGroup.values()) {
      groups.add(Group.decoded(group));
    }
    return new ClosedFiles(groups);
  }

  /** The files of all lists, each group as it is (no re-encoding). */
  public static ClosedFiles concat(List<ClosedFiles> lists) {
    List<Group> groups = new ArrayList<>();
    for (ClosedFiles l : lists) {
      groups.addAll(l.groups);
    }
    return new ClosedFiles(groups);
  }

  public boolean isEmpty() {
    return groups.isEmpty();
  }

  public int size() {
    int size = 0;
    for (Group g : groups) {
      size += g.locations.size();
    }
    return size;
  }

  /** The files' locations, in {@link #files()} order, without decoding any data file. */
  public List<String> locations() {
    List<String> locations = new ArrayList<>(size());
    for (Group g : groups) {
      locations.addAll(g.locations);
    }
    return locations;
  }

  /**
   * When the oldest file was closed ({@link Long#MAX_VALUE} if none), without decoding any data
   * file: the sink's fields of each group are read.
   */
  public long minClosedAtMillis() {
    long min = Long.MAX_VALUE;
    for (Group g : groups) {
      min = Math.min(min, g.minClosedAtMillis());
    }
    return min;
  }

  /** The files, decoding each group the first time it is asked for. */
  public List<ClosedFile> files() {
    List<ClosedFile> files = new ArrayList<>(size());
    for (Group g : groups) {
      files.addAll(g.files());
    }
    return files;
  }

  /**
   * Per group, its table and, where the group's manifest can be appended as it is, its {@link
   * ClosedFileManifests.AppendableGroup} (else {@code null}: a group of an earlier layout, or one
   * that was never encoded, as files read from a state of an earlier layout). Decodes no data file.
   */
  public List<GroupForAppend> forAppend() {
    List<GroupForAppend> out = new ArrayList<>(groups.size());
    for (Group g : groups) {
      out.add(new GroupForAppend(g.table, g.appendable()));
    }
    return out;
  }

  /** A group's table, and its manifest as an append can adopt it, or {@code null}. */
  public record GroupForAppend(int table, ClosedFileManifests.AppendableGroup appendable) {}

  public void write(DataOutputView out) throws IOException {
    out.writeInt(groups.size());
    for (Group g : groups) {
      byte[] bytes = g.encoded();
      out.writeInt(bytes.length);
      out.write(bytes);
    }
  }

  public static ClosedFiles read(DataInputView in) throws IOException {
    int count = in.readInt();
    List<Group> groups = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      byte[] bytes = new byte[in.readInt()];
      in.readFully(bytes);
      groups.add(Group.encoded(bytes));
    }
    return new ClosedFiles(groups);
  }

  /** Files of one table and spec; holds its decoded files, its bytes, or both once computed. */
  private static final class Group {
    private final int table;
    private final List<String> locations;
    private List<ClosedFile> files;
    private byte[] encoded;

    private Group(int table, List<String> locations, List<ClosedFile> files, byte[] encoded) {
      this.table = table;
      this.locations = List.copyOf(locations);
      this.files = files;
      this.encoded = encoded;
    }

    static Group decoded(List<ClosedFile> files) {
      return new Group(
          files.get(0).table(),
          files.stream().map(f -> f.file().location()).toList(),
          List.copyOf(files),
          null);
    }

    static Group encoded(byte[] bytes) throws IOException {
      ClosedFileManifests.GroupHeader header = ClosedFileManifests.readGroupHeader(bytes);
      return new Group(header.table(), header.locations(), null, bytes);
    }

    synchronized byte[] encoded() throws IOException {
      if (encoded == null) {
        encoded = ClosedFileManifests.encodeGroup(files);
      }
      return encoded;
    }

    synchronized ClosedFileManifests.AppendableGroup appendable() {
      if (encoded == null) {
        return null; // decoded already: its files are appended one by one
      }
      try {
        return ClosedFileManifests.readAppendable(encoded);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read closed files' manifest", e);
      }
    }

    synchronized long minClosedAtMillis() {
      if (files != null) {
        return files.stream().mapToLong(ClosedFile::closedAtMillis).min().orElse(Long.MAX_VALUE);
      }
      try {
        return ClosedFileManifests.minClosedAtMillis(encoded);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read closed files' fields", e);
      }
    }

    synchronized List<ClosedFile> files() {
      if (files == null) {
        try {
          files = List.copyOf(ClosedFileManifests.decodeGroup(encoded));
        } catch (IOException e) {
          throw new UncheckedIOException("cannot read closed files back from their manifest", e);
        }
      }
      return files;
    }
  }
}
