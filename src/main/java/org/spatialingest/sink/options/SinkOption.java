package org.spatialingest.sink.options;

import org.apache.flink.annotation.PublicEvolving;

/**
 * One option of the sink: its key (how messages and a configuration name it) and its default. A
 * plain value, not Flink's {@code ConfigOption}, so an application's configuration can name the
 * sink's options without loading Flink (the CLI's {@code plan} starts without it).
 *
 * @param key e.g. {@code sink.max-open-partitions}
 * @param defaultValue what the builder uses when it is not set
 */
@PublicEvolving
public record SinkOption<T>(String key, T defaultValue) {}
