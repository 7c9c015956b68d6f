package org.spatialingest.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * What one run's checkpoints cost, per completed checkpoint (savepoints excluded):
 *
 * <ul>
 *   <li>checkpointed bytes = Flink's {@code checkpointed_size} (what this checkpoint persisted;
 *       equal to {@code state_size} with the default hashmap state backend) + the bytes the sink
 *       staged at that barrier ({@link JobMonitor#STAGED_METRIC}; 0 when the sink has no such
 *       metric);
 *   <li>bytes arrived = {@link ArrivalProbe}'s bytes between the previous completed checkpoint's
 *       barrier and this one's;
 *   <li>the ratio of the two (only checkpoints with bytes arrived > 0: after a bounded source ends,
 *       checkpoints have none), its median and max (nearest rank), and {@code end_to_end_duration}
 *       p50 and p95.
 * </ul>
 *
 * @param completed completed checkpoints (not savepoints) in the history
 * @param withArrivals those of them that had bytes arrived, i.e. that the ratio covers
 * @param stagedMetric whether the sink reported {@link JobMonitor#STAGED_METRIC} (false: staged
 *     bytes counted as 0)
 */
record CheckpointSummary(
    int completed,
    int withArrivals,
    double ratioMedian,
    double ratioMax,
    long durationP50Ms,
    long durationP95Ms,
    long checkpointedSizeBytes,
    long stagedBytes,
    long arrivedBytes,
    boolean stagedMetric) {

  static CheckpointSummary of(
      JsonNode history,
      Map<Long, Long> arrivedById,
      Map<Long, Long> stagedCumulativeById,
      boolean stagedMetric) {
    TreeMap<Long, JsonNode> completed = new TreeMap<>();
    for (JsonNode c : history) {
      if ("COMPLETED".equals(c.path("status").asText()) && !c.path("is_savepoint").asBoolean()) {
        completed.put(c.path("id").asLong(), c);
      }
    }
    NavigableMap<Long, Long> arrived = new TreeMap<>(arrivedById);
    NavigableMap<Long, Long> staged = new TreeMap<>(stagedCumulativeById);
    List<Long> durations = new ArrayList<>();
    double[] ratios = new double[completed.size()];
    int n = 0;
    long previousId = 0;
    long previousStaged = 0;
    long checkpointedSum = 0;
    long stagedSum = 0;
    long arrivedSum = 0;
    for (Map.Entry<Long, JsonNode> e : completed.entrySet()) {
      long id = e.getKey();
      long bytesArrived =
          arrived.subMap(previousId, false, id, true).values().stream()
              .mapToLong(Long::longValue)
              .sum();
      Map.Entry<Long, Long> cumulative =
          staged.ceilingEntry(id); // first sample that saw this checkpoint complete
      long stagedNow = cumulative == null ? previousStaged : cumulative.getValue();
      long checkpointed =
          e.getValue().path("checkpointed_size").asLong() + (stagedNow - previousStaged);
      durations.add(e.getValue().path("end_to_end_duration").asLong());
      if (bytesArrived > 0) {
        ratios[n++] = (double) checkpointed / bytesArrived;
      }
      checkpointedSum += e.getValue().path("checkpointed_size").asLong();
      stagedSum += stagedNow - previousStaged;
      arrivedSum += bytesArrived;
      previousId = id;
      previousStaged = stagedNow;
    }
    double[] sorted = Arrays.copyOf(ratios, n);
    Arrays.sort(sorted);
    durations.sort(null);
    return new CheckpointSummary(
        completed.size(),
        n,
        Percentiles.of(sorted, 50),
        n == 0 ? Double.NaN : sorted[n - 1],
        Percentiles.of(durations, 50),
        Percentiles.of(durations, 95),
        checkpointedSum,
        stagedSum,
        arrivedSum,
        stagedMetric);
  }
}
