package org.spatialingest.geometry;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.locationtech.jts.geom.Coordinate;
import org.locationtech.jts.geom.Point;

/**
 * A simple GeoJSON point read from the parser is the point the tree reader makes of the same
 * object, and anything else is left to the tree reader, the parser standing at the object's end
 * either way.
 */
class StreamedPointTest {
  private final ObjectMapper mapper = new ObjectMapper();
  private final GeoJsonGeometryReader trees = new GeoJsonGeometryReader(Shapes.F);

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"type\":\"Point\",\"coordinates\":[13.4050012,52.5200066]}",
        "{\"coordinates\":[-0.0,1e-320],\"type\":\"Point\"}",
        "{\"type\":\"Point\",\"coordinates\":[12345678901234567890123,-7]}",
        "{ \"type\" : \"Point\" , \"coordinates\" : [ 1 , 2.5E3 ] }"
      })
  void simplePointsAreReadWithoutATree(String json) throws Exception {
    Coordinate streamed = streamed(json);
    assertThat(streamed).isNotNull();
    Point fromTree = (Point) trees.read(mapper.readTree(json));
    assertThat(streamed.x).isEqualTo(fromTree.getX());
    assertThat(streamed.y).isEqualTo(fromTree.getY());
    assertThat(Double.isNaN(streamed.getZ())).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "{\"type\":\"Point\",\"coordinates\":[1,2,3]}",
        "{\"type\":\"Point\",\"coordinates\":[1]}",
        "{\"type\":\"Point\",\"coordinates\":[]}",
        "{\"type\":\"Point\",\"coordinates\":[1,[2]]}",
        "{\"type\":\"Point\",\"coordinates\":[\"1\",2]}",
        "{\"type\":\"Point\"}",
        "{\"coordinates\":[1,2]}",
        "{\"type\":\"Point\",\"coordinates\":[1,2],\"bbox\":[1,2,1,2]}",
        "{\"type\":\"Point\",\"type\":\"LineString\",\"coordinates\":[1,2]}",
        "{\"type\":\"Point\",\"coordinates\":[1,2],\"coordinates\":[3,4]}",
        "{\"type\":{\"a\":[1]},\"coordinates\":[1,2]}",
        "{\"type\":\"LineString\",\"coordinates\":[[1,2],[3,4]]}",
        "{\"type\":\"GeometryCollection\",\"geometries\":[{\"type\":\"Point\",\"coordinates\":[1,2]}]}",
        "{}"
      })
  void anythingElseIsLeftToTheTreeWithTheParserAtTheObjectsEnd(String json) throws Exception {
    assertThat(streamed(json)).isNull();
  }

  /** Streams {@code json}, checking the parser ends at the object's end with nothing after it. */
  private Coordinate streamed(String json) throws Exception {
    try (JsonParser p = mapper.getFactory().createParser(json)) {
      assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
      Coordinate c = GeoJsonGeometryReader.streamedPoint(p);
      assertThat(p.currentToken()).isEqualTo(JsonToken.END_OBJECT);
      assertThat(p.nextToken()).isNull();
      return c;
    }
  }
}
