package org.spatialingest.bench;

import com.sun.management.GarbageCollectionNotificationInfo;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * Peak heap of this JVM, two ways: used heap sampled every 20 ms (includes garbage not yet
 * collected, so it depends on GC timing), and the largest heap left after any collection (closer to
 * what the run really keeps alive).
 */
final class HeapWatcher implements AutoCloseable {
  private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
  private final AtomicLong peakSampled = new AtomicLong();
  private final AtomicLong peakAfterGc = new AtomicLong();
  private final Set<String> heapPools = new HashSet<>();
  private final Thread sampler;
  private volatile boolean running = true;

  HeapWatcher() {
    ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP)
        .forEach(p -> heapPools.add(p.getName()));
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      ((NotificationEmitter) gc)
          .addNotificationListener(
              (notification, handback) -> {
                if (GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                    notification.getType())) {
                  var info =
                      GarbageCollectionNotificationInfo.from(
                          (CompositeData) notification.getUserData());
                  long after = 0;
                  for (var e : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
                    if (heapPools.contains(e.getKey())) {
                      after += e.getValue().getUsed();
                    }
                  }
                  peakAfterGc.accumulateAndGet(after, Math::max);
                }
              },
              null,
              null);
    }
    sampler =
        new Thread(
            () -> {
              while (running) {
                MemoryUsage heap = memory.getHeapMemoryUsage();
                peakSampled.accumulateAndGet(heap.getUsed(), Math::max);
                try {
                  Thread.sleep(20);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "heap-watcher");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Forgets the peaks so far (a warm-up job's), after a full collection. */
  void reset() {
    System.gc();
    peakSampled.set(0);
    peakAfterGc.set(0);
  }

  long peakSampledBytes() {
    return peakSampled.get();
  }

  long peakAfterGcBytes() {
    return peakAfterGc.get();
  }

  long maxHeapBytes() {
    return memory.getHeapMemoryUsage().getMax();
  }

  @Override
  public void close() {
    running = false;
    sampler.interrupt();
  }
}
