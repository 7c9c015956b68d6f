package org.spatialingest.sink.options;

import java.io.Serializable;
import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;

/**
 * How the sink's committer expires its tables' snapshots after its own commits: every {@code
 * everyCommits} commits to a table, Iceberg's {@code ExpireSnapshots} removes the snapshots older
 * than {@code maxAge}, never the newest {@code retainLast} nor one a branch or tag holds (the
 * sink's positions tag among them), and deletes the files only those snapshots referenced (their
 * manifest lists, the manifests merges replaced, statistics files). No lock is needed: the
 * committer is the one thread of its sink that commits, and an expiry is an ordinary Iceberg
 * commit, retried against other writers' commits like any other. A table shared by several jobs
 * keeps the shortest {@code maxAge} of theirs.
 *
 * <p>{@code maxAge} bounds the age of a state the job can be restored from: the sink looks up its
 * batches in the snapshots since a state was taken and refuses a restore whose history is expired
 * (it never guesses). It must cover {@code sink.max-latency} plus the checkpoint interval (a
 * failover's state), and should cover the oldest savepoint an operator may restore.
 *
 * <p>Cost: one expiry per {@code everyCommits} commits of a table, in the committer's thread after
 * that commit; it reads the manifests of the snapshots it removes.
 *
 * @param maxAge snapshots older than this are expired
 * @param retainLast snapshots always kept, however old
 * @param everyCommits commits to a table between two expiries of it
 */
@PublicEvolving
public record SnapshotExpiry(Duration maxAge, int retainLast, int everyCommits)
    implements Serializable {
  public SnapshotExpiry {
    if (maxAge == null || maxAge.isNegative() || maxAge.isZero()) {
      throw new IllegalArgumentException(
          SinkOptions.EXPIRE_MAX_AGE.key() + " must be > 0, was " + maxAge);
    }
    if (retainLast < 1) {
      throw new IllegalArgumentException(
          SinkOptions.EXPIRE_RETAIN_LAST.key() + " must be >= 1, was " + retainLast);
    }
    if (everyCommits < 1) {
      throw new IllegalArgumentException(
          SinkOptions.EXPIRE_EVERY_COMMITS.key() + " must be >= 1, was " + everyCommits);
    }
  }

  /** The defaults of {@link SinkOptions}. */
  public static SnapshotExpiry defaults() {
    return new SnapshotExpiry(
        SinkOptions.EXPIRE_MAX_AGE.defaultValue(),
        SinkOptions.EXPIRE_RETAIN_LAST.defaultValue(),
        SinkOptions.EXPIRE_EVERY_COMMITS.defaultValue());
  }
}
