package org.spatialingest.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretsTest {
  @Test
  void keysThatCarryCredentialsAreSecretWhateverTheirCase() {
    for (String key :
        new String[] {
          "kafka.properties.sasl.jaas.config",
          "kafka.properties.ssl.truststore.password",
          "kafka.properties.ssl.key.password",
          "kafka.properties.ssl.keystore.key",
          "catalog.properties.s3.secret-access-key",
          "catalog.properties.s3.access-key-id",
          "catalog.properties.credential",
          "catalog.properties.token",
          "catalog.properties.gcs.oauth2.token",
          "catalog.properties.adls.sas-token.acct",
          "catalog.properties.header.Authorization",
          "SOME.PRIVATE-KEY",
          "x.Api-Key",
          "fs.azure.account.key.acct"
        }) {
      assertThat(Secrets.isSecretKey(key)).as(key).isTrue();
      assertThat(Secrets.display(key, "value")).as(key).isEqualTo(Secrets.MASK);
    }
    for (String key :
        new String[] {
          "kafka.bootstrap-servers",
          "kafka.properties.sasl.mechanism",
          "kafka.properties.security.protocol",
          "kafka.properties.ssl.truststore.location",
          "catalog.properties.io-impl",
          "table.name"
        }) {
      assertThat(Secrets.isSecretKey(key)).as(key).isFalse();
    }
  }

  @Test
  void passwordsInsideOtherValuesAreMasked() {
    assertThat(Secrets.display("catalog.uri", "jdbc:postgresql://ingest:pw-in-uri@db:5432/lake"))
        .isEqualTo("jdbc:postgresql://ingest:******@db:5432/lake");
    assertThat(Secrets.display("catalog.uri", "jdbc:postgresql://db/lake?user=u&password=pw-q"))
        .isEqualTo("jdbc:postgresql://db/lake?user=u&password=******");
    assertThat(Secrets.display("catalog.uri", "http://iceberg-rest:8181"))
        .isEqualTo("http://iceberg-rest:8181");
  }

  @Test
  void scrubMasksRememberedValuesJaasOptionsAndSecretLinesInFreeText() {
    Secrets.remember(Map.of("catalog.properties.credential", "client:rem3mbered-9"));
    assertThat(Secrets.scrub("401 for client:rem3mbered-9 at http://rest"))
        .isEqualTo("401 for ****** at http://rest");
    assertThat(
            Secrets.scrub(
                "ScramLoginModule required username=\"u\" password=\"jaas-pw-1\"; failed"))
        .isEqualTo("ScramLoginModule required username=\"u\" password=\"******\"; failed");
    assertThat(
            Secrets.scrub(
                "while scanning a quoted scalar\n in 'reader', line 3:\n    password: \"yaml-pw-2\n"
                    + "    ^"))
        .doesNotContain("yaml-pw-2")
        .contains("password: ******");
  }

  @Test
  void jobConfigPrintsNoSecret() {
    JobConfig c =
        JobConfig.fromMap(
            Map.of(
                "kafka.properties.sasl.jaas.config",
                "x required password=\"cfg-pw-4\";",
                "catalog.properties.s3.secret-access-key",
                "cfg-s3-5"));
    assertThat(c.toString()).doesNotContain("cfg-pw-4").doesNotContain("cfg-s3-5");
    assertThat(c.redactedMap())
        .containsEntry("kafka.properties.sasl.jaas.config", Secrets.MASK)
        .containsEntry("catalog.properties.s3.secret-access-key", Secrets.MASK);
    assertThat(c.toMap()).containsEntry("catalog.properties.s3.secret-access-key", "cfg-s3-5");
  }
}
