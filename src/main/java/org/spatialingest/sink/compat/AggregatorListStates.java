package org.spatialingest.sink.compat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.OperatorStateStore;
import org.apache.flink.api.common.typeinfo.Types;
import org.spatialingest.table.TablePositions;

/**
 * Reads the aggregator state of the releases before the versioned aggregator state (up to 99d1af5):
 * six operator list states, each with its own text encoding. Read once on restore, then cleared, so
 * the next checkpoint holds only the versioned state. The facts are returned as {@link Restored},
 * which the aggregator turns into its state at once (its state type lives in the commit room, above
 * this one).
 */
@Internal
public final class AggregatorListStates {
  /** Marked a horizons list that was kept (possibly empty), as opposed to one never written. */
  private static final String HORIZONS_MARKER = "#horizons-v1";

  private AggregatorListStates() {}

  /**
   * What the six list states held, in the aggregator state's terms.
   *
   * @param lineage the sink lineage
   * @param emittedBatchIds ids of the batches emitted last, oldest first
   * @param pendingBatchDataFiles per pending batch (oldest first), its data file locations
   * @param receivedEnds per source key, one past the highest position received
   * @param stateTimeMillis when the state was taken
   * @param stagingHorizons per writer token, the highest checkpoint whose runs the state may
   *     reference; {@code null} if that release had not kept them yet
   */
  public record Restored(
      String lineage,
      List<String> emittedBatchIds,
      List<List<String>> pendingBatchDataFiles,
      Map<String, Long> receivedEnds,
      long stateTimeMillis,
      Map<String, Long> stagingHorizons) {}

  /**
   * The state in the six list states, or {@code null} if they hold none; clears them. Registers
   * them only when the restored state has them (a state of a later build never does). Cost: one
   * pass over the lists.
   */
  public static Restored readAndClear(OperatorStateStore store) throws Exception {
    if (!store.getRegisteredStateNames().contains("lineage")) {
      return null; // not restored from such a state: do not register the old states at all
    }
    ListState<String> lineageState =
        store.getListState(new ListStateDescriptor<>("lineage", Types.STRING));
    ListState<String> emittedState =
        store.getListState(new ListStateDescriptor<>("emitted-batch-ids", Types.STRING));
    ListState<String> pendingFilesState =
        store.getListState(new ListStateDescriptor<>("pending-batch-files", Types.STRING));
    ListState<String> receivedState =
        store.getListState(new ListStateDescriptor<>("received-positions", Types.STRING));
    ListState<Long> stateTimeState =
        store.getListState(new ListStateDescriptor<>("state-time", Types.LONG));
    ListState<String> horizonsState =
        store.getListState(new ListStateDescriptor<>("staging-run-horizons", Types.STRING));
    String lineage = null;
    for (String l : lineageState.get()) {
      lineage = l;
    }
    Restored state = null;
    if (lineage != null) {
      List<String> emitted = new ArrayList<>();
      emittedState.get().forEach(emitted::add);
      List<List<String>> pending = new ArrayList<>();
      for (String batch : pendingFilesState.get()) {
        pending.add(List.of(batch.split("\n")));
      }
      Map<String, Long> received = new HashMap<>();
      for (String r : receivedState.get()) {
        received.putAll(TablePositions.decode(r));
      }
      long stateTime = 0;
      for (Long t : stateTimeState.get()) {
        stateTime = t;
      }
      state =
          new Restored(
              lineage, emitted, pending, received, stateTime, horizons(horizonsState.get()));
    }
    lineageState.clear();
    emittedState.clear();
    pendingFilesState.clear();
    receivedState.clear();
    stateTimeState.clear();
    horizonsState.clear();
    return state;
  }

  /** "token=checkpoint" entries after the marker, or {@code null} without the marker. */
  private static Map<String, Long> horizons(Iterable<String> entries) {
    Map<String, Long> horizons = new HashMap<>();
    boolean marked = false;
    for (String e : entries) {
      if (e.equals(HORIZONS_MARKER)) {
        marked = true;
      } else {
        int eq = e.lastIndexOf('=');
        horizons.merge(e.substring(0, eq), Long.parseLong(e.substring(eq + 1)), Math::max);
      }
    }
    return marked ? horizons : null;
  }
}
