package org.spatialingest.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.config.JobConfig;
import org.spatialingest.source.ResumeFilter;
import org.spatialingest.table.FileInputs;
import org.spatialingest.table.PositionsRefusedException;
import org.spatialingest.table.SnapshotSummaryKeys;
import org.spatialingest.table.SourceKeys;

/**
 * A file source's input files as an operator changes them between runs without state, each run a
 * bounded job on a real MiniCluster into a Hadoop-catalog table: an appended file goes on after its
 * committed lines; a moved file is recognised by its fingerprint and not read again; a file
 * rewritten in place is refused, naming it; a last line without a newline is held back until it
 * ends (or, with {@code source.file.last-line: read}, read, and the file refused once it grows past
 * it); files whose every line is committed (unchanged, or moved) are not read again at all, and
 * beside them a grown file's new lines are. Every record exactly once in the telemetry and rejects
 * tables.
 */
class FileIdentityTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  @Test
  void anAppendedFileGoesOnAfterItsCommittedLines(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    Path file = in.resolve("part-a.ndjson");
    MixedInput a = MixedInput.of("a", 300, 40, 30);
    MixedInput b = MixedInput.of("b", 200, 40, 30);
    JobConfig config = config(dir, in, Map.of());
    append(file, a);
    run(config);
    a.assertExactlyOnceIn(config);

    append(file, b);
    run(config);
    a.plus(b).assertExactlyOnceIn(config);
    Table table = TestKit.table(config);
    FileInputs.Fingerprint f =
        FileInputs.read(table, table.currentSnapshot()).files().get(keyPath(config, file));
    assertThat(f.length()).as("the fingerprint covers the whole file").isEqualTo(Files.size(file));
    assertThat(table.statisticsFiles())
        .as("the fingerprints are registered with the snapshot that names them")
        .anySatisfy(
            s ->
                assertThat(s.path())
                    .isEqualTo(
                        table.currentSnapshot().summary().get(SnapshotSummaryKeys.FILE_INPUTS)));
  }

  @Test
  void filesCommittedWholeAreNotReadAgain(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    MixedInput a = MixedInput.of("a", 200, 40, 30); // rejects too: their lines are committed
    MixedInput b = MixedInput.of("b", 150, 40, 30);
    MixedInput c = MixedInput.of("c", 100, 40, 30);
    JobConfig config = config(dir, in, Map.of());
    append(in.resolve("part-a.ndjson"), a);
    Files.writeString(in.resolve("part-a.ndjson"), "\n  \t\n", StandardOpenOption.APPEND);
    append(in.resolve("part-a.ndjson"), MixedInput.of("z", 20, 40, 30)); // after blank lines
    append(in.resolve("part-b.ndjson"), b);
    append(in.resolve("part-c.ndjson"), c);
    Files.writeString(in.resolve("empty.ndjson"), "");
    MixedInput all = a.plus(MixedInput.of("z", 20, 40, 30)).plus(b).plus(c);
    assertThat(skipped(run(config))).as("a first run skips nothing").isZero();
    all.assertExactlyOnceIn(config);
    Table table = TestKit.table(config);
    long snapshot = table.currentSnapshot().snapshotId();

    // unchanged, one moved: every line of each is committed, so no reader gets any of them (on the
    // code before, each of the 470 records was read again and dropped by the resume filter)
    Files.move(
        in.resolve("part-c.ndjson"),
        Files.createDirectories(in.resolve("archive")).resolve("c.ndjson"));
    assertThat(skipped(run(config)))
        .as("records read again and dropped: none, the files are not read")
        .isZero();
    all.assertExactlyOnceIn(config);
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).as("nothing committed").isEqualTo(snapshot);
  }

  @Test
  void aGrownFilesNewLinesCommitOnceBesideFilesCommittedWhole(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    MixedInput a = MixedInput.of("a", 200, 40, 30);
    MixedInput b = MixedInput.of("b", 150, 40, 30);
    MixedInput more = MixedInput.of("m", 120, 40, 30);
    JobConfig config = config(dir, in, Map.of());
    append(in.resolve("part-a.ndjson"), a);
    append(in.resolve("part-b.ndjson"), b);
    run(config);
    a.plus(b).assertExactlyOnceIn(config);

    append(in.resolve("part-b.ndjson"), more);
    assertThat(skipped(run(config)))
        .as("only the grown file is read: its 150 committed lines are dropped, none of the other's")
        .isEqualTo(150);
    a.plus(b).plus(more).assertExactlyOnceIn(config);

    assertThat(skipped(run(config))).as("then both are committed whole").isZero();
    a.plus(b).plus(more).assertExactlyOnceIn(config);
  }

  @Test
  void aMovedFileIsRecognisedAndNotReadAgain(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    Path before = in.resolve("part-a.ndjson");
    MixedInput a = MixedInput.of("a", 300, 40, 30);
    MixedInput b = MixedInput.of("b", 100, 40, 30);
    JobConfig config = config(dir, in, Map.of());
    append(before, a);
    run(config);
    a.assertExactlyOnceIn(config);

    Path after = Files.createDirectories(in.resolve("archive")).resolve("renamed.ndjson");
    Files.move(before, after);
    append(after, b); // moved, then appended to
    run(config);
    a.plus(b).assertExactlyOnceIn(config);
    Table table = TestKit.table(config);
    assertThat(summaries(table))
        .as("the start that recognised the move recorded it")
        .anySatisfy(s -> assertThat(s).containsEntry(SnapshotSummaryKeys.FILES_MOVED, "1"));
    assertThat(
            FileInputs.read(table, table.currentSnapshot())
                .files()
                .get(keyPath(config, after))
                .aliases())
        .containsExactly(SourceKeys.file(keyPath(config, before)));
  }

  @Test
  void aFileRewrittenInPlaceIsRefusedNamingIt(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    Path file = in.resolve("part-a.ndjson");
    MixedInput a = MixedInput.of("a", 300, 40, 30);
    JobConfig config = config(dir, in, Map.of());
    append(file, a);
    run(config);
    Table table = TestKit.table(config);
    long snapshot = table.currentSnapshot().snapshotId();

    Files.delete(file);
    MixedInput c = MixedInput.of("c", 400, 40, 30);
    append(file, c); // other content, same path, longer
    assertThatThrownBy(() -> run(config))
        .isInstanceOf(PositionsRefusedException.class)
        .hasMessageContaining(keyPath(config, file))
        .hasMessageContaining("rewritten")
        .hasMessageContaining("Ways out");
    table.refresh();
    assertThat(table.currentSnapshot().snapshotId()).as("nothing committed").isEqualTo(snapshot);
    a.assertExactlyOnceIn(config);

    // the way out "another sink.id" reads the new content whole: none of its lines is skipped
    // because the first sink committed lines at the same path and line numbers (on the code before
    // it, its first 300 lines were); the new sink's second run reads nothing again
    JobConfig other = config.with(Map.of("sink.id", "rewritten"));
    run(other);
    a.plus(c).assertExactlyOnceIn(config);
    run(other);
    a.plus(c).assertExactlyOnceIn(config);
  }

  @Test
  void aLastLineWithoutNewlineWaitsUntilItEnds(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    Path file = in.resolve("part-a.ndjson");
    MixedInput a = MixedInput.of("a", 100, 40, 30);
    MixedInput b = MixedInput.of("b", 50, 40, 30);
    byte[] growing = b.values().get(0);
    int cut = growing.length / 2;
    JobConfig config = config(dir, in, Map.of());
    append(file, a);
    Files.write(file, Arrays.copyOf(growing, cut), StandardOpenOption.APPEND);
    run(config);
    a.assertExactlyOnceIn(config);
    assertThat(summaries(TestKit.table(config)))
        .anySatisfy(s -> assertThat(s).containsEntry(SnapshotSummaryKeys.LINES_HELD, "1"));

    // the writer finishes the line and adds more
    Files.write(file, Arrays.copyOfRange(growing, cut, growing.length), StandardOpenOption.APPEND);
    Files.write(file, new byte[] {'\n'}, StandardOpenOption.APPEND);
    append(file, new MixedInput(b.values().subList(1, 50), java.util.Set.of(), java.util.Set.of()));
    run(config);
    a.plus(b).assertExactlyOnceIn(config);
  }

  @Test
  void aLastLineReadWithoutNewlineRefusesTheFileOnceItGrows(@TempDir Path dir) throws Exception {
    Path in = Files.createDirectories(dir.resolve("in"));
    Path file = in.resolve("part-a.ndjson");
    MixedInput a = MixedInput.of("a", 100, 40, 30);
    JobConfig config = config(dir, in, Map.of("source.file.last-line", "read"));
    List<String> lines =
        a.values().stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList();
    Files.writeString(file, String.join("\n", lines)); // a closed file without a final newline
    run(config);
    a.assertExactlyOnceIn(config);
    run(config); // unchanged: nothing new, nothing refused
    a.assertExactlyOnceIn(config);

    Files.writeString(file, "more of the last line\n", StandardOpenOption.APPEND);
    assertThatThrownBy(() -> run(config))
        .isInstanceOf(PositionsRefusedException.class)
        .hasMessageContaining(keyPath(config, file))
        .hasMessageContaining("without a newline");
  }

  private static List<Map<String, String>> summaries(Table table) {
    table.refresh();
    List<Map<String, String>> all = new java.util.ArrayList<>();
    for (Snapshot s : table.snapshots()) {
      all.add(s.summary());
    }
    return all;
  }

  /** The path as the file source names it (the table's source keys and fingerprints use it). */
  private static String keyPath(JobConfig config, Path file) {
    return file.toUri().toString().replaceFirst("^file:///", "file:/");
  }

  private static void append(Path file, MixedInput input) throws Exception {
    StringBuilder sb = new StringBuilder();
    input.values().forEach(v -> sb.append(new String(v, StandardCharsets.UTF_8)).append('\n'));
    Files.writeString(file, sb.toString(), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  private static JobConfig config(Path dir, Path in, Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("source", "file:" + in);
    m.put("sink.max-latency", "1s");
    return TestKit.config("localhost:1", "unused", dir.resolve("warehouse"), m);
  }

  private static JobExecutionResult run(JobConfig config) throws Exception {
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    return env.execute("file-identity");
  }

  /** Records the resume filter dropped as committed: lines read again. */
  private static long skipped(JobExecutionResult result) {
    Long skipped = result.getAccumulatorResult(ResumeFilter.SKIPPED_ACCUMULATOR);
    return skipped == null ? 0 : skipped;
  }
}
