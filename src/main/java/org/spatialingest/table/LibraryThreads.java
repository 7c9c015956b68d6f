package org.spatialingest.table;

import java.io.IOException;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.hadoop.fs.FileSystem;
import org.apache.iceberg.hadoop.HadoopFileIO;
import org.apache.iceberg.util.ThreadPools;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stops the threads Iceberg and Hadoop start once per class loader and never stop, when Flink
 * releases the job's user-code class loader on a TaskManager.
 *
 * <p>Why: each submission of the job to a session cluster (a savepoint upgrade, a rescale, a second
 * job) loads the jar's classes in a new class loader. Iceberg's shared worker and delete pools,
 * {@link HadoopFileIO}'s delete pool and Hadoop's statistics cleaner are threads whose tasks
 * reference classes of that loader, and Hadoop adds a JVM shutdown hook of its own class; alive,
 * they keep every class of a finished job in metaspace (~45 MB each here), and a TaskManager at
 * Flink's default 256 MB of metaspace died at its sixth job. Registered with Flink's release hook
 * ({@code IfAbsent}: once per loader, whichever operator opens first); the hook runs after the
 * job's last task on the TaskManager ended, so nothing of the job uses these pools any more.
 *
 * <p>Cost: one map look-up per operator start.
 */
public final class LibraryThreads {
  private static final Logger LOG = LoggerFactory.getLogger(LibraryThreads.class);
  private static final String HOOK = "spatial-ingest: stop Iceberg and Hadoop library threads";

  private LibraryThreads() {}

  /** Stops the library threads when the job's class loader is released. */
  public static void stopOnRelease(UserCodeClassLoader loader) {
    if (loadedPerJob()) {
      loader.registerReleaseHookIfAbsent(HOOK, LibraryThreads::stop);
    }
  }

  /** Stops the library threads when the job's class loader is released. */
  public static void stopOnRelease(RuntimeContext context) {
    if (loadedPerJob()) {
      context.registerUserCodeClassLoaderReleaseHookIfAbsent(HOOK, LibraryThreads::stop);
    }
  }

  /**
   * Whether this code came with the job (a user-code class loader) rather than with Flink (its
   * {@code lib/}, or a test's class path): only then are the libraries' threads the job's alone.
   */
  private static boolean loadedPerJob() {
    return LibraryThreads.class.getClassLoader() != RuntimeContext.class.getClassLoader();
  }

  /** Stops the pools and the cleaner thread of this class loader's copies of Iceberg and Hadoop. */
  static void stop() {
    if (ours(ThreadPools.class)) {
      ThreadPools.getWorkerPool().shutdownNow();
      ThreadPools.getDeleteWorkerPool().shutdownNow();
      // private and created on first use: no API stops them
      Object pool = staticField(HadoopFileIO.class, "executorService");
      if (pool instanceof ExecutorService executor) {
        executor.shutdownNow();
      }
    }
    if (ours(FileSystem.class)) {
      stopHadoop();
    }
    removeShutdownHooks();
  }

  /**
   * Whether the job's class loader loaded {@code library} (from the job's jar): a library in
   * Flink's {@code lib/} is shared by every job on the TaskManager and must keep running.
   */
  private static boolean ours(Class<?> library) {
    return library.getClassLoader() == LibraryThreads.class.getClassLoader();
  }

  private static void stopHadoop() {
    try {
      FileSystem.closeAll(); // this loader's cached file systems, and their threads
    } catch (IOException | RuntimeException e) {
      LOG.debug("Closing the job's Hadoop file systems failed", e);
    }
    // Hadoop's cleaner ends its loop when interrupted
    Object cleaner = staticField(FileSystem.Statistics.class, "STATS_DATA_CLEANER");
    if (cleaner instanceof Thread thread) {
      thread.interrupt();
    }
  }

  /**
   * Removes the JVM shutdown hooks of this class loader's classes (a hook of its class, or running
   * its code): Hadoop's {@code ShutdownHookManager} adds one when its class loads (the first cached
   * file system), and Iceberg's exiting pools one each (Guava's {@code getExitingExecutorService}).
   * A hook is a GC root that holds its class loader for as long as the JVM runs. The JDK keeps the
   * hooks in a private map: readable where {@code java.lang} is opened, as Flink's JVM options do.
   */
  private static void removeShutdownHooks() {
    ClassLoader ours = LibraryThreads.class.getClassLoader();
    try {
      Class<?> registry = Class.forName("java.lang.ApplicationShutdownHooks");
      Field field = registry.getDeclaredField("hooks");
      field.setAccessible(true);
      List<Thread> hooks = new ArrayList<>();
      synchronized (registry) {
        ((Map<?, ?>) field.get(null)).keySet().forEach(h -> hooks.add((Thread) h));
      }
      Field target = Thread.class.getDeclaredField("target");
      target.setAccessible(true);
      for (Thread hook : hooks) {
        Object runs = target.get(hook);
        if (hook.getClass().getClassLoader() == ours
            || (runs != null && runs.getClass().getClassLoader() == ours)) {
          Runtime.getRuntime().removeShutdownHook(hook);
        }
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.info(
          "The job's JVM shutdown hooks (Hadoop's) could not be removed; each job keeps its classes in this "
              + "TaskManager's metaspace until it restarts (java.lang is not opened to this code: {})",
          e.toString());
    }
  }

  /**
   * A private static field's value, or null (logged) when this library version has no such field.
   */
  private static Object staticField(Class<?> owner, String name) {
    try {
      Field field = owner.getDeclaredField(name);
      field.setAccessible(true);
      return field.get(null);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.debug("{}.{} not found; its thread is left running", owner.getName(), name, e);
      return null;
    }
  }
}
