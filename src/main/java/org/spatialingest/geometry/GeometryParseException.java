package org.spatialingest.geometry;

/** A record that cannot become a row, with the reason code that goes with it to metrics and rejects. */
public class GeometryParseException extends Exception {
  private final RejectReason reason;

  public GeometryParseException(RejectReason reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  public RejectReason reason() {
    return reason;
  }
}
