package org.spatialingest.geometry;

/**
 * A record that cannot become a row: its {@link RejectReason} (malformed JSON, id, time, geometry,
 * caps, schema...), which goes with it to metrics and the rejects table, and a message saying what
 * is wrong. No stack trace (a reject is an expected outcome, and cheap).
 */
public class RecordRejectedException extends Exception {
  private final RejectReason reason;

  public RecordRejectedException(RejectReason reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public RejectReason reason() {
    return reason;
  }
}
