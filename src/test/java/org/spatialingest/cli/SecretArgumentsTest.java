package org.spatialingest.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Test;
import org.spatialingest.config.ConfigException;

/**
 * A secret given as a {@code --set} argument of an application-mode job is refused: Flink has put
 * the program arguments into its configuration under a key it does not mask ({@link
 * RunEnvironment#APPLICATION_ARGUMENTS_KEY}, as the operator's {@code FlinkDeployment} and {@code
 * flink run-application} do), so the refusal names the key, never the value, and the ways to pass
 * it; a reference ({@code ${env:VAR}}) and a job submitted by {@code flink run} pass.
 */
class SecretArgumentsTest {
  private static final String SECRET = "s3cr3t-value-never-shown";

  @Test
  void anApplicationModeJobWithASecretArgumentIsRefusedNamingTheKeyNotTheValue() {
    Configuration application = new Configuration();
    application.setString(
        RunEnvironment.APPLICATION_ARGUMENTS_KEY,
        "run;--set;kafka.properties.ssl.truststore.password=" + SECRET);
    List<String> overrides =
        List.of(
            "kafka.topic=t",
            "kafka.properties.ssl.truststore.password=" + SECRET,
            "catalog.uri=jdbc:postgresql://u:" + SECRET + "@db/x");
    assertThatThrownBy(() -> RunEnvironment.refuseSecretArguments(application, overrides))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("--set kafka.properties.ssl.truststore.password=******")
        .hasMessageContaining("--set catalog.uri=******")
        .hasMessageContaining("rotate that secret")
        .hasMessageContaining("${env:VAR}")
        .satisfies(
            e -> assertThat(e.getMessage()).doesNotContain(SECRET).doesNotContain("kafka.topic"));
  }

  @Test
  void referencesAndJobsOutsideApplicationModePass() {
    Configuration application = new Configuration();
    application.setString(RunEnvironment.APPLICATION_ARGUMENTS_KEY, "run");
    assertThatCode(
            () ->
                RunEnvironment.refuseSecretArguments(
                    application,
                    List.of(
                        "kafka.properties.sasl.jaas.config=org.apache.kafka...PlainLoginModule "
                            + "required password=\"${env:KAFKA_SASL_PASSWORD}\";")))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                RunEnvironment.refuseSecretArguments(
                    new Configuration(),
                    List.of("kafka.properties.ssl.truststore.password=" + SECRET)))
        .as("flink run: the arguments stay in the client's JVM")
        .doesNotThrowAnyException();
  }
}
