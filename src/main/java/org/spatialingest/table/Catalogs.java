package org.spatialingest.table;

import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.spatialingest.config.JobConfig;

/** Catalog and table loaders from the job configuration. */
public final class Catalogs {
  private Catalogs() {}

  public static CatalogLoader catalogLoader(JobConfig config) {
    Map<String, String> props = new HashMap<>(config.catalogProperties());
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouseUri(config.warehouse()));
    Configuration hadoop = new Configuration();
    hadoop.setClass("fs.file.impl", NioLocalFileSystem.class, FileSystem.class);
    return switch (config.catalogType()) {
      case HADOOP -> CatalogLoader.hadoop(config.catalogName(), hadoop, props);
      case JDBC -> {
        props.put(CatalogProperties.URI, config.catalogUri());
        yield CatalogLoader.custom(
            config.catalogName(), props, hadoop, "org.apache.iceberg.jdbc.JdbcCatalog");
      }
      case REST -> {
        props.put(CatalogProperties.URI, config.catalogUri());
        yield CatalogLoader.rest(config.catalogName(), hadoop, props);
      }
    };
  }

  public static TableIdentifier tableIdentifier(JobConfig config) {
    return TableIdentifier.of(config.namespace(), config.table());
  }

  public static TableLoader tableLoader(JobConfig config) {
    return TableLoader.fromCatalog(catalogLoader(config), tableIdentifier(config));
  }

  /** {@code <namespace>.<table>_rejects}: same catalog and namespace as the telemetry table. */
  public static TableIdentifier rejectsTableIdentifier(JobConfig config) {
    return TableIdentifier.of(config.namespace(), config.table() + "_rejects");
  }

  public static TableLoader rejectsTableLoader(JobConfig config) {
    return TableLoader.fromCatalog(catalogLoader(config), rejectsTableIdentifier(config));
  }

  /**
   * A plain path becomes an absolute file URI, so workers and the client agree on it whatever their
   * directory.
   */
  static String warehouseUri(String warehouse) {
    URI uri = URI.create(warehouse.replace('\\', '/'));
    if (uri.getScheme() != null && uri.getScheme().length() > 1) {
      return warehouse;
    }
    return Path.of(warehouse).toAbsolutePath().normalize().toUri().toString();
  }
}
