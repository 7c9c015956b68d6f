package org.spatialingest.sink.distribution;

import org.apache.flink.runtime.operators.coordination.OperatorEvent;

/**
 * The messages between the placement step's subtasks and the {@link RangeCoordinator}. Payloads
 * travel as versioned bytes ({@link SubtaskReportSerializer}, {@link GlobalRangesSerializer}), so a
 * coordinator and subtasks of different builds fail loudly rather than misread each other.
 */
final class RangeEvents {
  private RangeEvents() {}

  /** Subtask → coordinator: a {@link SubtaskReport}. */
  record Report(int version, byte[] bytes) implements OperatorEvent {}

  /**
   * Subtask → coordinator: at open ({@code firstRows} false), send me the current ranges if you
   * have any; at its first row after a start (true), an early report follows.
   */
  record Request(boolean firstRows) implements OperatorEvent {}

  /**
   * Subtask → coordinator: my input has ended, send me nothing more (an event to a subtask that has
   * finished fails it over, restarting a bounded job at its very end).
   */
  record Finished() implements OperatorEvent {}

  /** Coordinator → subtask: {@link GlobalRanges}. */
  record Ranges(int version, byte[] bytes) implements OperatorEvent {}
}
