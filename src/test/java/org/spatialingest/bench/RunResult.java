package org.spatialingest.bench;

import java.util.Map;

/**
 * What one child JVM measured for one sink in one phase; written as JSON by {@link BenchChild},
 * read by {@link SinkBenchmark}.
 *
 * @param variant {@code A} (our bounded sink) or {@code B} (Iceberg's IcebergSink)
 * @param phase {@code live} (paced input, stopped by draining) or {@code throughput} (bounded read
 *     of a backlog)
 * @param jobRuntimeMs the job's own runtime (JobExecutionResult net runtime)
 * @param clientWallMs from submitting the job to its end, seen by the client (the child's
 *     MiniCluster runs already)
 * @param readToEndMs from the first record passing the {@link ArrivalProbe} to the end of the job
 *     seen by the client: the job's runtime without its start (deployment, first fetch)
 * @param readToEndCpuMs the CPU time the child JVM (all its threads) used over {@code readToEndMs}:
 *     on a shared machine the robust measure of cost, since it does not count waiting for a core
 * @param readToEndJitCpuMs the part of {@code readToEndCpuMs} the JIT compiler threads used: a cost
 *     of a young JVM, not of a record (it still ran at ~1 core-second per second after a warm-up
 *     job, ~2 of ~8 CPU-s of a 1M-point run), so ratios are also given without it
 * @param drainMs live phase: from the stop request to the end of the drained job
 * @param checkpointStorage the checkpoint storage the job used (REST {@code checkpoints/config});
 *     always a file system
 * @param checkpoints the run's checkpoint costs, see {@link CheckpointSummary}
 * @param queryReady whether the table reached {@link QueryReady}: every expected row committed in
 *     data files whose median size is at least half the target T (bounded wait, see {@link
 *     BenchChild})
 * @param queryReadyMs from the first record read to that moment (-1 if never)
 * @param queryReadyCpuMs the child JVM's CPU time over {@code queryReadyMs}, compaction included
 *     (it runs in the same JVM); -1 if never
 * @param queryReadyJitCpuMs the JIT compiler threads' part of it; -1 if never
 * @param partitions the partitions the table's current data files lie in
 * @param metadata the table's metadata directory after the run
 */
record RunResult(
    String variant,
    String phase,
    long rowsCommitted,
    int snapshots,
    int dataFiles,
    long fileBytes,
    long fileP10,
    long fileP50,
    long fileP90,
    long fileMax,
    long maxRowAgeAtCommitMs,
    Map<String, Long> closeReasons,
    long peakHeapSampledBytes,
    long peakHeapAfterGcBytes,
    long maxHeapBytes,
    long jobRuntimeMs,
    long clientWallMs,
    long readToEndMs,
    long readToEndCpuMs,
    long readToEndJitCpuMs,
    long drainMs,
    String checkpointStorage,
    CheckpointSummary checkpoints,
    boolean queryReady,
    long queryReadyMs,
    long queryReadyCpuMs,
    long queryReadyJitCpuMs,
    int partitions,
    TableStats.Metadata metadata) {

  /** {@code readToEndCpuMs} without the JIT compiler threads' part: what the rows cost. */
  long readToEndCpuMsWithoutJit() {
    return readToEndCpuMs - readToEndJitCpuMs;
  }

  /** {@code queryReadyCpuMs} without the JIT compiler threads' part; -1 if never query-ready. */
  long queryReadyCpuMsWithoutJit() {
    return queryReady ? queryReadyCpuMs - queryReadyJitCpuMs : -1;
  }
}
