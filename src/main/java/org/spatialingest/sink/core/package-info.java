/**
 * What every room of the sink shares: the tables it writes ({@link
 * org.spatialingest.sink.core.SinkTable}, {@link org.spatialingest.sink.core.TableRouter}), a
 * closed data file and why it closed, the writer's report and its Iceberg-manifest form, file
 * names, fault points.
 */
package org.spatialingest.sink.core;
