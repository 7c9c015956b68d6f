package org.spatialingest.bench;

/** A measured phase that must not be reported: its message says why, for the benchmark's output. */
final class PhaseFailure extends Exception {
  PhaseFailure(String message) {
    super(message);
  }

  PhaseFailure(String message, Throwable cause) {
    super(message, cause);
  }
}
