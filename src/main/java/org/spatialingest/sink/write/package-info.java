/**
 * The writer: buffers per partition and key range, staging runs, the sorted Parquet file writer,
 * and {@link org.spatialingest.sink.write.ClosePolicy}, which decides every close.
 */
package org.spatialingest.sink.write;
