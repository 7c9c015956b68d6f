package org.spatialingest.sink.recovery;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.FileDeletes;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;

/**
 * Removes what a failure left behind in a table's location: data files and staging runs this sink
 * wrote after the state it restored from, which nothing will ever commit or read. Runs after the
 * first checkpoint completed since the restore, when every live writer has reported its token, so
 * the current writers' files are never touched.
 *
 * <ul>
 *   <li>a staging run is an orphan if it was written by a writer that is not current and the
 *       restored state cannot reference it ({@link StagingReferences}: written at a barrier after
 *       the restored checkpoint, or after the last barrier of its writer that the state may still
 *       reference);
 *   <li>a stored batch ({@link SinkFileNames#batchFile}) is an orphan if an aggregator instance
 *       that is not current stored it and it is not among the pending files: committed (its delete
 *       lost), or released after the restored state;
 *   <li>a batch manifest ({@link SinkFileNames#batchManifestStem}, in the table's metadata
 *       directory: the committer wrote it, then failed before or while committing it) is an orphan
 *       if an aggregator instance that is not current stored its batch, that batch is not among the
 *       pending files, and no snapshot of the table lists the manifest;
 *   <li>a data file is an orphan if it carries this sink's scope and a writer token that is not
 *       current, was created after {@code horizon}, no snapshot since {@code horizon} and no ref's
 *       snapshot (branch or tag) references it ({@link #referencedSince}), and no batch the
 *       restored state may still commit holds it.
 * </ul>
 *
 * Only this sink's scope is considered ({@link SinkScope}: its staging directory and the data files
 * named with its uid and sink id, plus the unscoped ones of earlier builds if it claims them), so a
 * job never removes the staging runs or uncommitted files of another job writing the same table
 * with another sink id. Two live jobs with the same sink id on one table are refused ({@link
 * SinkLease}).
 *
 * <p>Listing needs a {@link SupportsPrefixOperations} FileIO (Hadoop, S3, GCS, ADLS); with another
 * FileIO it does nothing and says so.
 */
@Internal
public final class OrphanCleaner {
  private static final Logger LOG = LoggerFactory.getLogger(OrphanCleaner.class);

  private OrphanCleaner() {}

  /**
   * @param currentTokens the tokens of the live writers and of the live aggregator
   * @param pendingFiles data files and stored batches the restored state may still commit
   * @param keptStagingTokens receives the writer tokens of the staging runs kept
   * @return the number of files deleted
   */
  public static int clean(
      Table table,
      SinkScope scope,
      Set<String> currentTokens,
      StagingReferences references,
      long horizonMillis,
      Set<String> pendingFiles,
      Set<String> keptStagingTokens) {
    if (!PrefixListing.supported(table.io())) {
      LOG.info(
          "{} cannot list files; orphans of a failure stay until Iceberg's deleteOrphanFiles removes them",
          table.io().getClass().getSimpleName());
      return 0;
    }
    List<String> orphans = new ArrayList<>();
    Set<String> pending = new HashSet<>();
    pendingFiles.forEach(location -> pending.add(sameForm(location)));
    for (String dir : SinkFileNames.stagingDirs(table.location(), scope)) {
      for (FileInfo f : PrefixListing.list(table.io(), dir + "/")) {
        SinkFileNames.StagingName batch = SinkFileNames.parseBatch(f.location());
        if (batch != null) {
          if (!currentTokens.contains(batch.token()) && !pending.contains(sameForm(f.location()))) {
            orphans.add(f.location());
          }
          continue;
        }
        SinkFileNames.StagingName name = SinkFileNames.parseStaging(f.location());
        if (name == null) {
          continue;
        }
        if (references.isOrphan(name, currentTokens)) {
          orphans.add(f.location());
        } else {
          keptStagingTokens.add(name.token());
        }
      }
    }
    table.refresh();
    orphans.addAll(orphanBatchManifests(table, scope, currentTokens, pending));
    Set<String> referenced = null;
    String dataDir =
        table
            .properties()
            .getOrDefault(TableProperties.WRITE_DATA_LOCATION, table.location() + "/data");
    for (FileInfo f : PrefixListing.list(table.io(), dataDir)) {
      String token = SinkFileNames.dataFileToken(scope, f.location());
      if (token == null
          || currentTokens.contains(token)
          || f.createdAtMillis() < horizonMillis
          || pending.contains(sameForm(f.location()))) {
        continue;
      }
      if (referenced == null) {
        referenced = referencedSince(table, horizonMillis);
      }
      if (!referenced.contains(sameForm(f.location()))) {
        orphans.add(f.location());
      }
    }
    int deleted = FileDeletes.deleteNow(table.io(), orphans);
    if (deleted > 0) {
      LOG.warn(
          "Removed {} files of {} that a failure left unreferenced (uncommitted data files, staging runs of an "
              + "incomplete checkpoint) of sink id {}",
          deleted,
          table.name(),
          scope.sinkId());
    }
    return deleted;
  }

  /**
   * The batch manifests of {@code scope} in the table's metadata directory that nothing will commit
   * and no snapshot lists. A manifest of a batch that may still be committed (current aggregator,
   * or pending in the restored state) is kept: its committer may be about to append it. Reads every
   * snapshot's manifest list, only when such a manifest is there.
   */
  private static List<String> orphanBatchManifests(
      Table table, SinkScope scope, Set<String> currentTokens, Set<String> pending) {
    if (!(table instanceof HasTableOperations ops)) {
      return List.of();
    }
    Set<SinkFileNames.StagingName> pendingBatches = new HashSet<>();
    for (String location : pending) {
      SinkFileNames.StagingName batch = SinkFileNames.parseBatch(location);
      if (batch != null) {
        pendingBatches.add(batch);
      }
    }
    String someFile = ops.operations().metadataFileLocation("x");
    String metadataDir = someFile.substring(0, someFile.lastIndexOf('/') + 1);
    List<String> candidates = new ArrayList<>();
    for (FileInfo f : PrefixListing.list(table.io(), metadataDir)) {
      SinkFileNames.StagingName batch = SinkFileNames.parseBatchManifest(scope, f.location());
      if (batch != null
          && !currentTokens.contains(batch.token())
          && !pendingBatches.contains(batch)) {
        candidates.add(f.location());
      }
    }
    if (candidates.isEmpty()) {
      return List.of();
    }
    Set<String> listed = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      for (ManifestFile m : s.allManifests(table.io())) {
        listed.add(sameForm(m.path()));
      }
    }
    return candidates.stream().filter(c -> !listed.contains(sameForm(c))).toList();
  }

  /**
   * A location as listings spell it: a local file URI lists as {@code file:/path} though the table
   * may name it {@code file:///path}.
   */
  static String sameForm(String location) {
    return location.startsWith("file:///")
        ? "file:/" + location.substring("file:///".length())
        : location;
  }

  /**
   * The data files that any snapshot committed since {@code horizon}, and the snapshot of any ref
   * (branches, tags: the sink's own tag, a rolled-away branch head), still reference: a file
   * created after the horizon can be referenced only by such snapshots or by a ref, whether or not
   * the snapshot that added it is an ancestor of the current one (a rollback) or is still in the
   * metadata (expired). Cost: each distinct data manifest of those snapshots read once.
   */
  static Set<String> referencedSince(Table table, long horizonMillis) {
    Set<String> referenced = new HashSet<>();
    Set<String> manifests = new HashSet<>();
    Set<Long> snapshots = new HashSet<>();
    for (Snapshot s : table.snapshots()) {
      if (s.timestampMillis() >= horizonMillis) {
        snapshots.add(s.snapshotId());
      }
    }
    table.refs().values().forEach(ref -> snapshots.add(ref.snapshotId()));
    for (long id : snapshots) {
      Snapshot s = table.snapshot(id);
      if (s == null) {
        continue;
      }
      for (ManifestFile manifest : s.dataManifests(table.io())) {
        if (!manifests.add(manifest.path())) {
          continue;
        }
        try (ManifestReader<DataFile> reader =
            ManifestFiles.read(manifest, table.io(), table.specs())) {
          reader.forEach(f -> referenced.add(sameForm(f.location())));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return referenced;
  }
}
