package org.spatialingest.config;

/** A configuration error; the message names the key and what is allowed. */
public class ConfigException extends IllegalArgumentException {
  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
