/**
 * The aggregator (one batch per checkpoint, source positions, its versioned state) and the
 * committer (one snapshot per table).
 */
package org.spatialingest.sink.commit;
