package org.spatialingest.source;

import java.io.Serializable;

/** The bytes a record counts against a bytes-per-second admission cap. */
@FunctionalInterface
public interface RecordSizer<T> extends Serializable {
  long bytes(T record);
}
