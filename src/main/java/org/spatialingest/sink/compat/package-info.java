/**
 * The compat room: readers of the sink's retired state formats, each converting what it reads into
 * today's types at once, so no other class of the sink knows an old format. It sits below the rooms
 * whose state readers call it (write, commit: Flink hands a versioned serializer or an operator's
 * state store the old bytes there) and above core, whose types it produces ({@link
 * org.spatialingest.sink.core.ClosedFile}, {@link org.spatialingest.sink.core.RowBatch}); what
 * belongs to a room above it (the aggregator's state) it returns as plain values that room wraps.
 * The current version of each format stays with its serializer.
 */
package org.spatialingest.sink.compat;
