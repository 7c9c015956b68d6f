package org.spatialingest.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.spatialingest.source.SourceRecord;

/**
 * The benchmark's definition of "bytes arrived": a pass-through chained right after the source
 * (same for both sinks) that counts the bytes of the record values — the JSON as produced,
 * uncompressed — passing between two checkpoint barriers, and adds them, summed over subtasks,
 * under the id of the checkpoint whose barrier ends the interval. The ledger is static: the child's
 * MiniCluster runs in the child's JVM, one measured job per JVM ({@link #reset} after a warm-up
 * job). Holds no state.
 */
final class ArrivalProbe extends RichMapFunction<SourceRecord, SourceRecord>
    implements CheckpointedFunction {
  private static final Map<Long, LongAdder> ARRIVED = new ConcurrentHashMap<>();
  private static final LongAdder RECORDS = new LongAdder();
  private static final AtomicLong FIRST_NANOS = new AtomicLong();
  private static final AtomicLong FIRST_CPU_NANOS = new AtomicLong();
  private static final AtomicLong FIRST_JIT_CPU_NANOS = new AtomicLong();
  private transient long bytes;

  @Override
  public SourceRecord map(SourceRecord record) {
    if (bytes == 0 && FIRST_NANOS.get() == 0) {
      if (FIRST_NANOS.compareAndSet(0, System.nanoTime())) {
        FIRST_CPU_NANOS.set(processCpuNanos());
        FIRST_JIT_CPU_NANOS.set(jitCpuNanos());
      }
    }
    bytes += record.value.length;
    RECORDS.increment();
    return record;
  }

  /**
   * Records that passed so far, all subtasks (how far the job has read: the same measure for both
   * sinks).
   */
  static long records() {
    return RECORDS.sum();
  }

  /** The CPU time of this JVM (all threads) when the first record passed, 0 before. */
  static long firstArrivalCpuNanos() {
    return FIRST_CPU_NANOS.get();
  }

  /** The CPU time this JVM has used so far, all threads (user + system). */
  static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  /** The JIT compiler threads' CPU time ({@link #jitCpuNanos}) when the first record passed. */
  static long firstArrivalJitCpuNanos() {
    return FIRST_JIT_CPU_NANOS.get();
  }

  /**
   * The CPU time (user + system) this JVM's JIT compiler threads have used so far, from {@code
   * /proc/self/task} (Linux; 0 elsewhere), at the kernel's clock-tick resolution (10 ms). The child
   * runs with a fixed set of compiler threads ({@code -XX:-UseDynamicNumberOfCompilerThreads}), so
   * none exits and takes its time with it.
   */
  static long jitCpuNanos() {
    Path tasks = Path.of("/proc/self/task");
    if (!Files.isDirectory(tasks)) {
      return 0;
    }
    long ticks = 0;
    try (Stream<Path> all = Files.list(tasks)) {
      for (Path task : (Iterable<Path>) all::iterator) {
        try {
          if (!Files.readString(task.resolve("comm")).contains("CompilerThre")) {
            continue; // "C1 CompilerThre", "C2 CompilerThre": names are cut at 15 characters
          }
          String stat = Files.readString(task.resolve("stat"));
          // after "pid (comm) ": state is field 3, utime 14, stime 15
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException e) {
          // the thread ended while listed: it is not a compiler thread (those do not end)
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return ticks * 10_000_000L; // USER_HZ = 100 on Linux
  }

  /** {@link System#nanoTime()} when the first record passed (any subtask), 0 before. */
  static long firstArrivalNanos() {
    return FIRST_NANOS.get();
  }

  @Override
  public void snapshotState(FunctionSnapshotContext context) {
    ARRIVED.computeIfAbsent(context.getCheckpointId(), id -> new LongAdder()).add(bytes);
    bytes = 0;
  }

  @Override
  public void initializeState(FunctionInitializationContext context) {}

  /** Forgets every count (a JVM that runs more than one job, e.g. a test). */
  static void reset() {
    ARRIVED.clear();
    RECORDS.reset();
    FIRST_NANOS.set(0);
    FIRST_CPU_NANOS.set(0);
    FIRST_JIT_CPU_NANOS.set(0);
  }

  /**
   * Bytes arrived per checkpoint id (the interval that checkpoint's barrier closed), ascending by
   * id.
   */
  static TreeMap<Long, Long> arrivedByCheckpoint() {
    TreeMap<Long, Long> out = new TreeMap<>();
    ARRIVED.forEach((id, sum) -> out.put(id, sum.sum()));
    return out;
  }
}
