package org.spatialingest.sink.recovery;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;

/**
 * One live job per sink id and table: a small lease file in the sink's staging directory ({@link
 * SinkFileNames#leaseFile}), written through the table's {@link FileIO}, naming the Flink job and
 * the sink's lineage and renewed every {@link #renewMillis} while the job runs. A job that starts
 * while the lease names another job and another lineage, and is younger than its own {@code
 * valid-for}, is refused ({@link Refused}): two jobs with one sink id would take each other's
 * staging runs and files for orphans. The same job (same Flink job id: a failover) and a restore of
 * the same lineage (from its own checkpoint or savepoint, under a new job id) take it over. A clean
 * stop or cancel releases it. A start that finds another lineage's live lease waits for it to be
 * renewed (a live job: refused) or to expire (a job killed without a clean stop, which never renews
 * again: this one takes it), at most the lease's {@code valid-for} (3 C + 15 s), so a start right
 * after a kill -9 goes on by itself.
 *
 * <p>Format (version 1): UTF-8 lines {@code key=value}: {@code version}, {@code job-id}, {@code
 * lineage}, {@code heartbeat-ms} (the writer's wall clock), {@code valid-for-ms}. Keys a reader
 * does not know are ignored; a later version must keep these five.
 */
@Internal
public final class SinkLease {
  private static final Logger LOG = LoggerFactory.getLogger(SinkLease.class);
  static final int VERSION = 1;

  /** Longest renewal period, whatever the checkpoint interval. */
  private static final long MAX_RENEW_MS = 30_000;

  private static final long MIN_RENEW_MS = 1_000;

  /** Tolerance for a slow store, a GC pause and clock skew between machines. */
  private static final long SLACK_MS = 15_000;

  /** How often a start that waits on another job's lease reads it again. */
  private static final long WAIT_POLL_MS = 500;

  private final FileIO io;
  private final String path;
  private final String tableName;
  private final SinkScope scope;
  private final String jobId;
  private final String lineage;
  private final long validForMillis;

  /** What a lease file says. */
  public record Holder(String jobId, String lineage, long heartbeatMillis, long validForMillis) {
    long expiresAtMillis() {
      return heartbeatMillis + validForMillis;
    }
  }

  /** A start refused: another job holds the lease of this sink id on this table. */
  public static final class Refused extends IllegalStateException {
    private Refused(String message) {
      super(message);
    }
  }

  public SinkLease(
      FileIO io,
      String tableLocation,
      String tableName,
      SinkScope scope,
      String jobId,
      String lineage,
      Duration checkpointInterval) {
    this.io = io;
    this.path = SinkFileNames.leaseFile(tableLocation, scope);
    this.tableName = tableName;
    this.scope = scope;
    this.jobId = jobId;
    this.lineage = lineage;
    this.validForMillis = validForMillis(checkpointInterval);
  }

  /** How often a running job renews its lease: the checkpoint interval C, within 1 s..30 s. */
  public static long renewMillis(Duration checkpointInterval) {
    return Math.max(MIN_RENEW_MS, Math.min(MAX_RENEW_MS, checkpointInterval.toMillis()));
  }

  /**
   * How long a lease stays live after its last renewal: three renewals missed, plus 15 s for a slow
   * store, a pause and clock skew (C = 10 s: 45 s; at most 105 s).
   */
  public static long validForMillis(Duration checkpointInterval) {
    return 3 * renewMillis(checkpointInterval) + SLACK_MS;
  }

  /**
   * Takes the lease at a start or restore. If another lineage holds a live lease, waits until its
   * holder renews it or it expires: at most its {@code valid-for}, a renewal period (at most 30 s)
   * when the holder is alive.
   *
   * @throws Refused if another live job holds it (it renewed its lease while this one waited)
   */
  public void acquire() {
    Holder holder = read(io, path);
    if (blocks(holder)) {
      awaitRenewalOrExpiry(holder);
    }
    write();
    LOG.info("Sink id {} on {}: lease {} taken by job {}", scope.sinkId(), tableName, path, jobId);
  }

  /**
   * Renews the lease while the job runs.
   *
   * @throws Refused if another live job has taken it meanwhile (both started at once, or this job's
   *     renewals lapsed): this job must stop
   */
  public void renew() {
    checkHolder("must stop");
    write();
  }

  /** Removes the lease if this job still holds it (a clean stop or cancel); best effort. */
  public void release() {
    try {
      Holder holder = read(io, path);
      if (holder == null ? io.newInputFile(path).exists() : holder.jobId().equals(jobId)) {
        io.deleteFile(path); // ours, or left unreadable by a write that was cut off
      }
    } catch (RuntimeException e) {
      LOG.warn("Could not release lease {}; it expires by itself", path, e);
    }
  }

  /** Whether {@code holder} keeps this job out: another job and lineage, not yet expired. */
  private boolean blocks(Holder holder) {
    if (holder == null || holder.jobId().equals(jobId) || holder.lineage().equals(lineage)) {
      return false;
    }
    long left = holder.expiresAtMillis() - System.currentTimeMillis();
    if (left <= 0) {
      LOG.info(
          "Sink id {} on {}: the lease of job {} expired {} s ago; taking it",
          scope.sinkId(),
          tableName,
          holder.jobId(),
          -left / 1000);
      return false;
    }
    return true;
  }

  /**
   * Reads the lease every {@link #WAIT_POLL_MS} until it is renewed or taken by another job (a live
   * job: refused), removed, or expired (returns).
   */
  private void awaitRenewalOrExpiry(Holder holder) {
    LOG.info(
        "Sink id {} on {}: job {} holds the lease {} (renewed {} s ago); waiting up to {} s for it"
            + " to be renewed (a live job: this start is refused) or to expire (a job gone without a"
            + " clean stop: this one takes it)",
        scope.sinkId(),
        tableName,
        holder.jobId(),
        path,
        (System.currentTimeMillis() - holder.heartbeatMillis()) / 1000,
        Math.max(0, (holder.expiresAtMillis() - System.currentTimeMillis()) / 1000));
    while (true) {
      long left = holder.expiresAtMillis() - System.currentTimeMillis();
      try {
        Thread.sleep(Math.max(1, Math.min(WAIT_POLL_MS, left)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the lease " + path, e);
      }
      Holder latest = read(io, path);
      if (latest == null) {
        return; // released by a clean stop
      }
      if (latest.heartbeatMillis() != holder.heartbeatMillis()
          || !latest.jobId().equals(holder.jobId())) {
        if (blocks(latest)) {
          throw refused("cannot start", latest, true);
        }
        return;
      }
      if (!blocks(latest)) {
        return; // expired without a renewal
      }
    }
  }

  private void checkHolder(String outcome) {
    Holder holder = read(io, path);
    if (blocks(holder)) {
      throw refused(outcome, holder, false);
    }
  }

  private Refused refused(String outcome, Holder holder, boolean renewedWhileWaiting) {
    long now = System.currentTimeMillis();
    return new Refused(
        String.format(
            "This job %s: another job writes table %s with sink id '%s': job %s renewed its lease %s %.1f s ago "
                + "(live for %.0f s after each renewal)%s. Two jobs with one sink id would delete each other's "
                + "staging runs and files. Give this job another `sink.id` (each job writing a table needs its "
                + "own), or stop job %s first.",
            outcome,
            tableName,
            scope.sinkId(),
            holder.jobId(),
            path,
            (now - holder.heartbeatMillis()) / 1000.0,
            holder.validForMillis() / 1000.0,
            renewedWhileWaiting ? " while this job waited for it: that job is running" : "",
            holder.jobId()));
  }

  private void write() {
    String text =
        "version="
            + VERSION
            + "\njob-id="
            + jobId
            + "\nlineage="
            + lineage
            + "\nheartbeat-ms="
            + System.currentTimeMillis()
            + "\nvalid-for-ms="
            + validForMillis
            + "\n";
    try (OutputStream out = io.newOutputFile(path).createOrOverwrite()) {
      out.write(text.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("could not write lease " + path, e);
    }
  }

  /**
   * The lease at {@code path}, or {@code null} if there is none. A lease that cannot be parsed (a
   * write under way) is read again for a second; one that still cannot was left by a write that was
   * cut off (a cancel interrupts the task thread, a kill stops it), so no live job holds it: a live
   * holder rewrites it whole at every renewal.
   */
  static Holder read(FileIO io, String path) {
    for (int attempt = 0; ; attempt++) {
      Map<String, String> fields = new HashMap<>();
      InputFile file = io.newInputFile(path);
      try (InputStream in = file.newStream()) {
        for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
          int eq = line.indexOf('=');
          if (eq > 0) {
            fields.put(line.substring(0, eq), line.substring(eq + 1).trim());
          }
        }
      } catch (NotFoundException | java.io.FileNotFoundException e) {
        return null;
      } catch (IOException e) {
        throw new UncheckedIOException("could not read lease " + path, e);
      } catch (UncheckedIOException e) {
        if (e.getCause() instanceof java.io.FileNotFoundException) {
          return null;
        }
        throw e;
      }
      try {
        return new Holder(
            required(fields, "job-id"),
            required(fields, "lineage"),
            Long.parseLong(required(fields, "heartbeat-ms")),
            Long.parseLong(required(fields, "valid-for-ms")));
      } catch (IllegalArgumentException e) {
        if (attempt >= 4) {
          LOG.warn("Lease {} cannot be read ({}): a write of it was cut off", path, e.getMessage());
          return null;
        }
        try {
          Thread.sleep(250);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while reading lease " + path, ie);
        }
      }
    }
  }

  private static String required(Map<String, String> fields, String key) {
    String value = fields.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("no " + key);
    }
    return value;
  }
}
