package org.spatialingest.sink.recovery;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.spatialingest.sink.core.SinkFileNames;
import org.spatialingest.sink.core.SinkScope;
import org.spatialingest.table.SinkHistory;

/**
 * One live job per sink id and table: a small lease file in the sink's staging directory ({@link
 * SinkFileNames#leaseFile}), written through the table's {@link FileIO}, naming the Flink job and
 * the sink's lineage and renewed every {@link #renewMillis} while the job runs. A job whose Flink
 * job id is not the holder's (another job, whatever its lineage: a second job started from the
 * running one's checkpoint or savepoint too) is refused ({@link Refused}) while the holder is
 * alive: two jobs with one sink id would commit the same records and take each other's staging runs
 * and files for orphans. The same job (same Flink job id: a failover, or the operator's last-state
 * upgrade) takes it over at once; a clean stop or cancel (also a stop-with-savepoint) releases it,
 * so the next job starts at once.
 *
 * <p>Liveness is judged on the reader's own clock, never by comparing two hosts' clocks: a start
 * that finds another job's lease watches it; if its content changes (the holder renewed it) the
 * start is refused; if it stays the same for the holder's {@code valid-for} as this JVM measures
 * it, the holder is gone (killed without a clean stop) and the start takes it. Only a lease whose
 * heartbeat looks older than {@code valid-for} plus {@link SinkHistory#SLACK} (the sink's one
 * clock-skew allowance) is taken without watching: no clock runs that far off. So a start right
 * after a kill -9 waits up to {@code valid-for} ({@link #validForMillis}: 45–105 s), and a start
 * long after does not wait.
 *
 * <p>Writes: the first lease is created exclusively ({@link OutputFile#create}: atomic on HDFS and
 * a local file system up to Hadoop's existence check; on S3FileIO it is a check and a PUT, not
 * atomic); a renewal or a take-over rewrites it whole, and a take-over reads it back a second later
 * to see that no other start took it at the same moment. On an object store a renewal is one PUT
 * and one GET per {@link #renewMillis} (10 s: 360 of each per hour; a waiting start adds one GET
 * per 0.5 s).
 *
 * <p>Format (version 1): UTF-8 lines {@code key=value}: {@code version}, {@code job-id}, {@code
 * lineage}, {@code heartbeat-ms} (the writer's wall clock, for people and for the very-old rule),
 * {@code valid-for-ms}. Keys a reader does not know are ignored; a later version must keep these
 * five.
 */
@Internal
public final class SinkLease {
  private static final Logger LOG = LoggerFactory.getLogger(SinkLease.class);
  static final int VERSION = 1;

  /** Shortest renewal period, whatever the checkpoint interval: renewals are PUTs. */
  private static final long MIN_RENEW_MS = 10_000;

  /** Longest renewal period, whatever the checkpoint interval. */
  private static final long MAX_RENEW_MS = 30_000;

  /**
   * Tolerance for a slow store and a GC pause of the holder (lateness of a renewal on the holder's
   * own clock; clock skew between hosts needs none: expiry is judged on the reader's clock).
   */
  private static final long RENEWAL_LATENESS_MS = 15_000;

  /** How often a start that waits on another job's lease reads it again. */
  private static final long WAIT_POLL_MS = 500;

  private final FileIO io;
  private final String path;
  private final String tableName;
  private final SinkScope scope;
  private final String jobId;
  private final String lineage;
  private final long renewMillis;
  private final long validForMillis;
  private final LongSupplier clock;

  /** What a lease file says. */
  public record Holder(String jobId, String lineage, long heartbeatMillis, long validForMillis) {}

  /** A start refused: another job holds the lease of this sink id on this table. */
  public static final class Refused extends IllegalStateException {
    private Refused(String message) {
      super(message);
    }
  }

  /**
   * @param checkpointInterval C: the lease is renewed every C, within 10 s..30 s ({@link
   *     #renewMillis})
   */
  public SinkLease(
      FileIO io,
      String tableLocation,
      String tableName,
      SinkScope scope,
      String jobId,
      String lineage,
      Duration checkpointInterval) {
    this(
        io,
        tableLocation,
        tableName,
        scope,
        jobId,
        lineage,
        renewMillis(checkpointInterval),
        RENEWAL_LATENESS_MS,
        System::currentTimeMillis);
  }

  /**
   * The same with its renewal period, its slack and its clock given (tests: short leases, skewed
   * clocks).
   */
  SinkLease(
      FileIO io,
      String tableLocation,
      String tableName,
      SinkScope scope,
      String jobId,
      String lineage,
      long renewMillis,
      long slackMillis,
      LongSupplier clock) {
    this.io = io;
    this.path = SinkFileNames.leaseFile(tableLocation, scope);
    this.tableName = tableName;
    this.scope = scope;
    this.jobId = jobId;
    this.lineage = lineage;
    this.renewMillis = renewMillis;
    this.validForMillis = 3 * renewMillis + slackMillis;
    this.clock = clock;
  }

  /** How often a running job renews its lease: the checkpoint interval C, within 10 s..30 s. */
  public static long renewMillis(Duration checkpointInterval) {
    return Math.max(MIN_RENEW_MS, Math.min(MAX_RENEW_MS, checkpointInterval.toMillis()));
  }

  /** This lease's renewal period. */
  public long renewMillis() {
    return renewMillis;
  }

  /**
   * How long a lease stays live after its last renewal: three renewals missed, plus 15 s for a slow
   * store and a pause (45 s at most C = 10 s; at most 105 s).
   */
  public static long validForMillis(Duration checkpointInterval) {
    return 3 * renewMillis(checkpointInterval) + RENEWAL_LATENESS_MS;
  }

  /**
   * Takes the lease at a start or restore. If another job holds it, watches it until its holder
   * renews it (refused) or it stays unchanged for its {@code valid-for} on this JVM's clock
   * (taken).
   *
   * @throws Refused if another live job holds it
   */
  public void acquire() {
    while (true) {
      Holder holder = read(io, path);
      if (holder == null) {
        if (createExclusively()) {
          break;
        }
        continue; // another start created it first: read it
      }
      if (!holder.jobId().equals(jobId) && !abandoned(holder)) {
        awaitChangeOrSilence(holder);
      }
      takeOver();
      break;
    }
    LOG.info("Sink id {} on {}: lease {} taken by job {}", scope.sinkId(), tableName, path, jobId);
  }

  /**
   * Renews the lease while the job runs.
   *
   * @throws Refused if another job has taken it meanwhile (its renewals lapsed, or both started at
   *     once): this job must stop
   */
  public void renew() {
    Holder holder = read(io, path);
    if (holder != null && !holder.jobId().equals(jobId)) {
      throw refused("must stop", holder);
    }
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

  /**
   * A heartbeat older than any renewal period and clock skew could explain: its holder is gone (a
   * lease left by a kill long ago).
   */
  private boolean abandoned(Holder holder) {
    long age = clock.getAsLong() - holder.heartbeatMillis();
    if (age > holder.validForMillis() + SinkHistory.SLACK.toMillis()) {
      LOG.info(
          "Sink id {} on {}: the lease of job {} was last renewed {} s ago; taking it",
          scope.sinkId(),
          tableName,
          holder.jobId(),
          age / 1000);
      return true;
    }
    return false;
  }

  /**
   * Reads the lease every {@link #WAIT_POLL_MS} until its content changes (another job renewed or
   * took it: refused), it is removed (a clean stop: returns), or it stays as it was for its {@code
   * valid-for} on this JVM's clock (its holder is gone: returns).
   */
  private void awaitChangeOrSilence(Holder holder) {
    long since = clock.getAsLong();
    LOG.info(
        "Sink id {} on {}: job {} holds the lease {}; watching it for up to {} s: renewed, this start"
            + " is refused (that job is running); unchanged, this one takes it (a job gone without a"
            + " clean stop)",
        scope.sinkId(),
        tableName,
        holder.jobId(),
        path,
        holder.validForMillis() / 1000);
    while (true) {
      sleep(WAIT_POLL_MS);
      Holder latest = read(io, path);
      if (latest == null) {
        return; // released by a clean stop
      }
      if (!latest.equals(holder)) {
        throw refused("cannot start", latest);
      }
      if (clock.getAsLong() - since >= holder.validForMillis()) {
        LOG.info(
            "Sink id {} on {}: the lease of job {} was not renewed for {} s; taking it",
            scope.sinkId(),
            tableName,
            holder.jobId(),
            holder.validForMillis() / 1000);
        return;
      }
    }
  }

  /** Writes the lease as this job's and reads it back a moment later: another start may race. */
  private void takeOver() {
    write();
    sleep(2 * WAIT_POLL_MS);
    Holder holder = read(io, path);
    if (holder != null && !holder.jobId().equals(jobId)) {
      throw refused("cannot start", holder);
    }
  }

  private boolean createExclusively() {
    try (OutputStream out = io.newOutputFile(path).create()) {
      out.write(text().getBytes(StandardCharsets.UTF_8));
      return true;
    } catch (AlreadyExistsException e) {
      return false;
    } catch (IOException e) {
      throw new UncheckedIOException("could not create lease " + path, e);
    } catch (UncheckedIOException e) {
      if (e.getCause() instanceof java.nio.file.FileAlreadyExistsException
          || e.getCause() instanceof org.apache.hadoop.fs.FileAlreadyExistsException) {
        return false;
      }
      throw e;
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the sink's lease", e);
    }
  }

  private Refused refused(String outcome, Holder holder) {
    return new Refused(
        String.format(
            "This job %s: another job writes table %s with sink id '%s': job %s (lineage %s) holds"
                + " its lease %s and renewed it while this job watched it (live for %.0f s after each"
                + " renewal): that job is running. Two jobs with one sink id would commit the same"
                + " records and delete each other's staging runs and files. Give this job another"
                + " `sink.id` (each job writing a table needs its own), or stop job %s first.",
            outcome,
            tableName,
            scope.sinkId(),
            holder.jobId(),
            holder.lineage(),
            path,
            holder.validForMillis() / 1000.0,
            holder.jobId()));
  }

  private String text() {
    return "version="
        + VERSION
        + "\njob-id="
        + jobId
        + "\nlineage="
        + lineage
        + "\nheartbeat-ms="
        + clock.getAsLong()
        + "\nvalid-for-ms="
        + validForMillis
        + "\n";
  }

  private void write() {
    try (OutputStream out = io.newOutputFile(path).createOrOverwrite()) {
      out.write(text().getBytes(StandardCharsets.UTF_8));
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
      } catch (IOException | UncheckedIOException e) {
        if (e.getCause() instanceof java.io.FileNotFoundException) {
          return null;
        }
        // read while the holder rewrites it (a local file system's checksum no longer matches):
        // read again, as an unparseable lease is
        if (attempt >= 4) {
          throw new UncheckedIOException(
              "could not read lease " + path,
              e instanceof IOException failed ? failed : new IOException(e));
        }
        pause(path);
        continue;
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
        pause(path);
      }
    }
  }

  private static void pause(String path) {
    try {
      Thread.sleep(250);
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading lease " + path, ie);
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
