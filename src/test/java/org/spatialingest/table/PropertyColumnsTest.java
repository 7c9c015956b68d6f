package org.spatialingest.table;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.config.JobConfig;

/**
 * Bad property names and types under {@code input.typed-properties: auto}, against a real Iceberg
 * table: nothing fails, nothing is lost, what cannot be a column stays in {@code properties} and is
 * counted by reason.
 */
class PropertyColumnsTest {
  @TempDir Path dir;

  private Table table;
  private PropertyColumns columns;
  private TableLayout layout;

  private void open(Map<String, String> extra) {
    Map<String, String> m = new HashMap<>(extra);
    m.put("catalog.type", "hadoop");
    m.put("catalog.warehouse", dir.resolve("warehouse").toString());
    m.put("input.typed-properties", "auto");
    JobConfig config = JobConfig.fromMap(m);
    Catalog catalog = Catalogs.catalogLoader(config).loadCatalog();
    layout = TelemetryTable.layout(config);
    table =
        TableBootstrap.ensureTable(
            catalog, Catalogs.tableIdentifier(config), layout, config.partitioning());
    columns = layout.propertyColumns();
  }

  /** Writes one "file" of rows with these properties; returns the expanded rows by name. */
  private List<Map<String, Object>> file(String... properties) {
    PropertyColumns.FileScan scan = columns.newScan();
    List<RowData> rows = new ArrayList<>();
    for (String p : properties) {
      GenericRowData row = new GenericRowData(layout.fieldCount());
      row.setField(TelemetryTable.HILBERT, 0L); // required: its getter reads a primitive
      row.setField(TelemetryTable.PROPERTIES, StringData.fromString(p));
      rows.add(row);
      scan.add(row);
    }
    PropertyColumns.FileColumns file =
        scan.commitColumns(table, layout.writeSchema(table.schema()));
    List<Map<String, Object>> out = new ArrayList<>();
    for (RowData row : rows) {
      RowData expanded = file.expand(row);
      Map<String, Object> byName = new HashMap<>();
      for (int i = 0; i < file.schema().columns().size(); i++) {
        Object v = ((GenericRowData) expanded).getField(i);
        if (v != null) {
          byName.put(
              file.schema().columns().get(i).name(), v instanceof StringData s ? s.toString() : v);
        }
      }
      out.add(byName);
    }
    return out;
  }

  @Test
  void badNamesAndTypesStayInPropertiesAndAreCounted() {
    open(Map.of());
    List<Map<String, Object>> rows =
        file(
            "{\"Speed!\":3,\"\":1,\"!!\":2,\"event_time\":\"x\",\"bbox\":1,\"n\":1,\"deep\":{\"a\":[1]}}",
            "{\"n\":2.5,\"mixed\":1}",
            "{\"mixed\":\"text\",\"flag\":true}");
    assertThat(table.schema().findField("speed_").type()).isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("n").type())
        .as("long and double in one file: double")
        .isEqualTo(Types.DoubleType.get());
    assertThat(table.schema().findField("mixed").type())
        .as("the first type wins")
        .isEqualTo(Types.LongType.get());
    assertThat(table.schema().findField("flag").type()).isEqualTo(Types.BooleanType.get());
    assertThat(table.schema().findField("deep")).isNull();
    assertThat(rows.get(0))
        .containsEntry("speed_", 3L)
        .containsEntry("n", 1.0)
        .containsEntry(
            "properties", "{\"\":1,\"!!\":2,\"event_time\":\"x\",\"bbox\":1,\"deep\":{\"a\":[1]}}");
    assertThat(rows.get(1)).containsEntry("n", 2.5).containsEntry("mixed", 1L);
    assertThat(rows.get(2))
        .containsEntry("flag", true)
        .containsEntry("properties", "{\"mixed\":\"text\"}")
        .doesNotContainKey("mixed");
    assertThat(columns.keptCounts())
        .containsEntry(PropertyColumns.Reason.INVALID_NAME, 2L)
        .containsEntry(PropertyColumns.Reason.BASE_COLUMN, 2L)
        .containsEntry(PropertyColumns.Reason.TYPE_MISMATCH, 1L);

    // a later file: a fraction for the long column stays; nothing is added twice
    int schemaId = table.schema().schemaId();
    assertThat(file("{\"mixed\":1.5,\"flag\":false}").get(0))
        .containsEntry("flag", false)
        .containsEntry("properties", "{\"mixed\":1.5}");
    assertThat(table.schema().schemaId())
        .as("no schema commit without a new column")
        .isEqualTo(schemaId);
  }

  @Test
  void tenThousandNamesStopAtTheCapAndTheAllowList() {
    open(Map.of("input.auto-columns.max", "5", "input.auto-columns.allow", ""));
    StringBuilder many = new StringBuilder("{");
    for (int i = 0; i < 10_000; i++) {
      many.append(i == 0 ? "" : ",").append("\"p").append(i).append("\":").append(i);
    }
    List<Map<String, Object>> rows = file(many.append("}").toString());
    assertThat(columns.propertyColumns(table.schema())).hasSize(5);
    assertThat(rows.get(0)).containsEntry("p0", 0L).containsEntry("p4", 4L);
    assertThat((String) rows.get(0).get("properties")).contains("\"p5\":5", "\"p9999\":9999");
    assertThat(columns.keptCounts()).containsEntry(PropertyColumns.Reason.OVER_CAP, 9_995L);
  }

  @Test
  void onlyAllowedNamesBecomeColumns() {
    open(Map.of("input.auto-columns.allow", "battery"));
    assertThat(file("{\"Battery\":80,\"heading\":12}").get(0))
        .containsEntry("battery", 80L)
        .containsEntry("properties", "{\"heading\":12}");
    assertThat(table.schema().findField("heading")).isNull();
    assertThat(columns.keptCounts()).containsEntry(PropertyColumns.Reason.NOT_ALLOWED, 1L);
  }
}
