package org.spatialingest.cli;

import picocli.CommandLine.IVersionProvider;

/** Reports the jar's implementation version, or "dev" when run from classes. */
public final class VersionProvider implements IVersionProvider {
  @Override
  public String[] getVersion() {
    String v = Main.class.getPackage().getImplementationVersion();
    return new String[] {"spatial-ingest " + (v == null ? "dev" : v)};
  }
}
