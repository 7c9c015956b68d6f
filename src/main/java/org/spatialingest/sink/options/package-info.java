/**
 * The sink's options as a user of {@link org.spatialingest.sink.BoundedIcebergSink} sets them: the
 * enums its builder takes and every option's key and default ({@link
 * org.spatialingest.sink.options.SinkOptions}), owned here and nowhere else. An application maps
 * its own configuration onto them (spatial-ingest's {@code config.JobOptions} takes their keys and
 * defaults from here). Imports nothing of the sink's other packages, so every room of the sink can
 * name an option.
 */
package org.spatialingest.sink.options;
