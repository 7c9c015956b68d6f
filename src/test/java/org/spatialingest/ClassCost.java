package org.spatialingest;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints what each test class cost its JVM: wall time and process CPU (all threads, including a
 * broker's and a MiniCluster's), and appends it to {@code target/class-cost.tsv}. A test JVM runs
 * one class at a time, so the CPU is the class's own (plus what a previous class left running), and
 * unlike wall time it holds on a loaded machine: it says which classes to make cheaper (tests.md,
 * "How the suite runs"). A fourth column holds the CPU of the child processes that ended while the
 * class ran, usually its own (a standalone cluster's JVMs, a {@code flink run} client, a demo; one
 * a class leaves running counts where it ends): Linux adds an ended child's CPU to its parent's
 * once the JDK's reaper has waited for it ({@code cutime}, {@code cstime} in {@code
 * /proc/self/stat}); 0 where that file is absent. The last column is FAILED when a test of the
 * class failed (JUnit reports the class itself as successful then). Registered through {@code
 * META-INF/services}.
 */
public final class ClassCost implements TestExecutionListener {
  private static final com.sun.management.OperatingSystemMXBean OS =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  /** Linux's {@code USER_HZ}: the unit of {@code /proc/<pid>/stat}'s times, 100 on every ABI. */
  private static final double TICKS_PER_SECOND = 100.0;

  private record Start(long wallNanos, long cpuNanos, long childTicks) {}

  private final Map<String, Start> started = new ConcurrentHashMap<>();

  /** Classes (unique ids) with a test that did not succeed. */
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  private volatile TestPlan plan;

  @Override
  public void testPlanExecutionStarted(TestPlan testPlan) {
    plan = testPlan;
  }

  @Override
  public void executionStarted(TestIdentifier id) {
    if (id.getSource().orElse(null) instanceof ClassSource) {
      started.put(
          id.getUniqueId(),
          new Start(System.nanoTime(), OS.getProcessCpuTime(), endedChildrenTicks()));
    }
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    if (!(id.getSource().orElse(null) instanceof ClassSource source)) {
      if (result.getStatus() != TestExecutionResult.Status.SUCCESSFUL && plan != null) {
        for (Optional<TestIdentifier> p = plan.getParent(id);
            p.isPresent();
            p = plan.getParent(p.get())) {
          if (started.containsKey(p.get().getUniqueId())) {
            failed.add(p.get().getUniqueId());
            break;
          }
        }
      }
      return;
    }
    Start start = started.remove(id.getUniqueId());
    if (start == null) {
      return;
    }
    double wall = (System.nanoTime() - start.wallNanos()) / 1e9;
    double cpu = (OS.getProcessCpuTime() - start.cpuNanos()) / 1e9;
    double children = (endedChildrenTicks() - start.childTicks()) / TICKS_PER_SECOND;
    String line =
        String.format(
            Locale.ROOT,
            "%s\t%.1f\t%.1f\t%.1f\t%s",
            source.getClassName(),
            wall,
            cpu,
            children,
            failed.remove(id.getUniqueId())
                ? TestExecutionResult.Status.FAILED
                : result.getStatus());
    System.out.println(
        "[class-cost] "
            + line.replace('\t', ' ')
            + " (class, wall s, cpu s, ended child processes' cpu s)");
    String dir = System.getProperty("spatialingest.build.dir");
    if (dir != null) {
      try {
        Files.writeString(
            Path.of(dir, "class-cost.tsv"),
            line + System.lineSeparator(),
            StandardCharsets.UTF_8,
            StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        System.out.println("[class-cost] not written: " + e);
      }
    }
  }

  /** {@code cutime + cstime} of this JVM: the CPU of its ended and reaped children, in ticks. */
  static long endedChildrenTicks() {
    try {
      String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
      // the fields after the command name, which is in parentheses and may hold spaces: state is
      // field 3 of proc(5), cutime 16 and cstime 17
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
      return Long.parseLong(f[16 - 3]) + Long.parseLong(f[17 - 3]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }
}
