package org.spatialingest.sizing;

/**
 * Which of the three bounds closes a batch first. Names are the stable JSON values of {@code plan}.
 */
public enum BindingConstraint {
  /** the in-flight buffer of one writer (M) fills before anything else */
  MEMORY("memory"),
  /** the buffered rows would encode to a file of the target size (T) */
  FILE_SIZE("file_size"),
  /** the oldest buffered row would exceed the freshness bound (L) at the next checkpoint */
  LATENCY("latency");

  private final String jsonName;

  BindingConstraint(String jsonName) {
    this.jsonName = jsonName;
  }

  public String jsonName() {
    return jsonName;
  }
}
