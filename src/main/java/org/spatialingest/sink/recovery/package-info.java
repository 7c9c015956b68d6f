/**
 * After a restore: reconciling the tables with the restored state, and removing what a failure left
 * (orphan files, staging runs).
 */
package org.spatialingest.sink.recovery;
