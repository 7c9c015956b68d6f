package org.spatialingest.sink.core;

import java.io.Serializable;
import org.apache.flink.annotation.Internal;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.table.TableLayout;

/** One table a sink writes: how to load it and what its rows look like. */
@Internal
public record SinkTable(TableLoader loader, TableLayout layout) implements Serializable {}
