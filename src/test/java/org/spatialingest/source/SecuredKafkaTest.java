package org.spatialingest.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.spatialingest.KafkaBroker;
import org.spatialingest.SpatialIngestJob;
import org.spatialingest.TestKit;
import org.spatialingest.cli.CliRun;
import org.spatialingest.config.JobConfig;
import org.spatialingest.local.TelemetryGenerator;
import org.spatialingest.table.Catalogs;

/**
 * A real broker with SASL (SCRAM-SHA-512 for the job, PLAIN for the super user that sets it up) and
 * ACLs (StandardAuthorizer, {@code allow.everyone.if.no.acl.found=false}). The job's principal has
 * exactly the ACLs operations.md lists; with them the job commits every record, writes the rejects
 * to the dead-letter topic and publishes the group's offsets. A wrong password or a missing ACL
 * stops the start with one line naming the cause; credentials lost while running end the job after
 * a bounded number of restarts under an unbounded restart strategy.
 */
class SecuredKafkaTest {
  @RegisterExtension static final MiniClusterExtension FLINK = KafkaBroker.flink(4);

  private static final String TOPIC = "secured";
  private static final String DEAD_LETTERS = "secured-dlq";
  private static final String GROUP = "secured-group";
  private static final String JOB_USER = "ingest";
  private static final String JOB_PASSWORD = "ingest-pw-7f3a";

  private static KafkaClusterTestKit cluster;
  private static Admin admin;

  @BeforeAll
  static void startSecuredBroker() throws Exception {
    TestKitNodes nodes =
        new TestKitNodes.Builder()
            .setCombined(true)
            .setNumBrokerNodes(1)
            .setNumControllerNodes(1)
            .setBrokerSecurityProtocol(SecurityProtocol.SASL_PLAINTEXT)
            .build();
    // the test kit's SASL listener: PLAIN with the super user plain-admin; StandardAuthorizer and
    // allow.everyone.if.no.acl.found=false are its defaults, set here again so the test says so
    String listener = nodes.brokerListenerName().value().toLowerCase(java.util.Locale.ROOT);
    cluster =
        new KafkaClusterTestKit.Builder(nodes)
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setConfigProp("auto.create.topics.enable", "false")
            .setConfigProp(
                "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
            .setConfigProp("allow.everyone.if.no.acl.found", "false")
            // the controller listener is PLAINTEXT: its principal is ANONYMOUS
            .setConfigProp("super.users", "User:plain-admin;User:ANONYMOUS")
            .setConfigProp("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-512")
            .setConfigProp(
                "listener.name." + listener + ".scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required;")
            // connections re-authenticate every 2 s, so a changed password takes effect on them
            .setConfigProp("connections.max.reauth.ms", "2000")
            .build();
    cluster.format();
    cluster.startup();
    cluster.waitForReadyBrokers();
    admin = Admin.create(superUser());
    admin
        .createTopics(
            List.of(new NewTopic(TOPIC, 3, (short) 1), new NewTopic(DEAD_LETTERS, 1, (short) 1)))
        .all()
        .get();
    createUser(JOB_USER, JOB_PASSWORD);
    grant(JOB_USER, ResourceType.TOPIC, TOPIC, AclOperation.READ, AclOperation.DESCRIBE);
    grant(JOB_USER, ResourceType.GROUP, GROUP, AclOperation.READ);
    grant(JOB_USER, ResourceType.TOPIC, DEAD_LETTERS, AclOperation.WRITE);
  }

  @AfterAll
  static void stop() throws Exception {
    if (admin != null) {
      admin.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void theJobCommitsEveryRecordWithExactlyTheListedAcls(@TempDir Path warehouse) throws Exception {
    int valid = 2_000;
    int malformed = 20;
    List<byte[]> values = new ArrayList<>();
    TelemetryGenerator generator = new TelemetryGenerator(11, 10, 500, 40);
    long t0 = System.currentTimeMillis() - 60_000;
    for (int i = 0; i < valid; i++) {
      values.add(generator.next(t0 + i).json());
    }
    for (int i = 0; i < malformed; i++) {
      values.add(("{not json " + i).getBytes(StandardCharsets.UTF_8));
    }
    produce(TOPIC, values);

    JobConfig config = config(warehouse, JOB_USER, JOB_PASSWORD);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(2);
    SpatialIngestJob.build(env, config, true);
    env.execute("secured");

    assertThat(TestKit.rows(TestKit.table(config))).hasSize(valid);
    assertThat(
            TestKit.rows(
                Catalogs.catalogLoader(config)
                    .loadCatalog()
                    .loadTable(Catalogs.rejectsTableIdentifier(config))))
        .hasSize(malformed);
    assertThat(deadLetters()).as("rejects produced to the dead-letter topic").isEqualTo(malformed);
    long end = 0;
    for (long offset :
        admin
            .listOffsets(
                Map.of(
                    new TopicPartition(TOPIC, 0),
                        org.apache.kafka.clients.admin.OffsetSpec.latest(),
                    new TopicPartition(TOPIC, 1),
                        org.apache.kafka.clients.admin.OffsetSpec.latest(),
                    new TopicPartition(TOPIC, 2),
                        org.apache.kafka.clients.admin.OffsetSpec.latest()))
            .all()
            .get()
            .values()
            .stream()
            .map(info -> info.offset())
            .toList()) {
      end += offset;
    }
    assertThat(end).isEqualTo(valid + malformed);
    assertThat(groupOffsets()).as("the group's offsets = the table's positions").isEqualTo(end);

    // plan --topic samples with the same credentials (kafka.properties of --config)
    Path yaml = warehouse.resolve("job.yaml");
    Files.writeString(yaml, yaml(config));
    CliRun plan =
        CliRun.of(
            "plan",
            "--topic",
            TOPIC,
            "--bootstrap",
            cluster.bootstrapServers(),
            "--config",
            yaml.toString(),
            "--sample-records",
            "200",
            "--rate",
            "10");
    assertThat(plan.exitCode()).as(plan.err()).isZero();
    Files.writeString(yaml, yaml(config(warehouse, JOB_USER, "wrong-pw-5d1e")));
    CliRun refused =
        CliRun.of(
            "plan",
            "--topic",
            TOPIC,
            "--bootstrap",
            cluster.bootstrapServers(),
            "--config",
            yaml.toString(),
            "--rate",
            "10");
    assertThat(refused.exitCode()).isEqualTo(3);
    assertThat(refused.err().strip().lines()).hasSize(1);
    assertThat(refused.err()).contains("authentication failed").doesNotContain("wrong-pw-5d1e");
  }

  @Test
  void aWrongPasswordStopsTheStartWithinAMinuteNamingAuthentication(@TempDir Path warehouse)
      throws Exception {
    Path yaml = warehouse.resolve("job.yaml");
    Files.writeString(yaml, yaml(config(warehouse, JOB_USER, "wrong-pw-91c2")));
    long start = System.nanoTime();
    CliRun run = CliRun.of("run", "--config", yaml.toString());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(took).isLessThan(Duration.ofSeconds(60));
    assertThat(run.exitCode()).isEqualTo(3);
    assertThat(run.err().strip().lines()).hasSize(1);
    assertThat(run.err()).contains("authentication failed").doesNotContain("wrong-pw-91c2");
  }

  @Test
  void aMissingAclStopsTheStartNamingAuthorizationAndTheResource(@TempDir Path warehouse)
      throws Exception {
    createUser("no-group", "no-group-pw");
    grant("no-group", ResourceType.TOPIC, TOPIC, AclOperation.READ, AclOperation.DESCRIBE);
    grant("no-group", ResourceType.TOPIC, DEAD_LETTERS, AclOperation.WRITE);
    assertStartRefused(
        config(warehouse, "no-group", "no-group-pw"), "authorization", "group " + GROUP);

    createUser("no-read", "no-read-pw");
    grant("no-read", ResourceType.TOPIC, TOPIC, AclOperation.DESCRIBE);
    grant("no-read", ResourceType.GROUP, GROUP, AclOperation.READ);
    assertStartRefused(
        config(warehouse, "no-read", "no-read-pw"), "authorization", "READ topic " + TOPIC);

    createUser("no-topic", "no-topic-pw");
    grant("no-topic", ResourceType.GROUP, GROUP, AclOperation.READ);
    assertStartRefused(
        config(warehouse, "no-topic", "no-topic-pw"), "authorization", "topic " + TOPIC);

    createUser("no-dlq", "no-dlq-pw");
    grant("no-dlq", ResourceType.TOPIC, TOPIC, AclOperation.READ, AclOperation.DESCRIBE);
    grant("no-dlq", ResourceType.GROUP, GROUP, AclOperation.READ);
    assertStartRefused(
        config(warehouse, "no-dlq", "no-dlq-pw"), "authorization", "topic " + DEAD_LETTERS);
  }

  @Test
  void credentialsLostWhileRunningEndTheJobAfterBoundedRestarts(@TempDir Path warehouse)
      throws Exception {
    String topic = "rotated";
    admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
    createUser("rotating", "rotating-pw-1");
    grant("rotating", ResourceType.TOPIC, topic, AclOperation.READ, AclOperation.DESCRIBE);
    grant("rotating", ResourceType.GROUP, "rotated-group", AclOperation.READ);
    produce(topic, List.of(new TelemetryGenerator(3, 2, 5, 8).next(0).json()));
    JobConfig config =
        config(warehouse, "rotating", "rotating-pw-1")
            .with(
                Map.of(
                    "kafka.topic", topic,
                    "kafka.group-id", "rotated-group",
                    "rejects.dead-letter-topic", ""));
    Configuration conf = new Configuration();
    // what Flink does by default with checkpointing: restart for ever (here without the back-off)
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, Integer.MAX_VALUE);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    SpatialIngestJob.build(env, config, false);
    JobClient job = env.executeAsync("rotated");
    awaitRunning(job);
    Thread.sleep(3_000);

    // the secret is rotated on the broker; the job keeps the old one
    admin
        .alterUserScramCredentials(
            List.of(
                new UserScramCredentialUpsertion(
                    "rotating",
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                    "rotating-pw-2")))
        .all()
        .get();

    Throwable failure = null;
    try {
      job.getJobExecutionResult().get(180, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      failure = e;
    } finally {
      if (!job.getJobStatus().get().isTerminalState()) {
        job.cancel().get(60, TimeUnit.SECONDS);
      }
    }
    assertThat(failure).as("the job failed instead of restarting for ever").isNotNull();
    assertThat(ExceptionUtils.findThrowable(failure, KafkaAccessLostException.class))
        .as("ended by the access guard: %s", ExceptionUtils.stringifyException(failure))
        .hasValueSatisfying(
            e ->
                assertThat(e.getMessage())
                    .contains("authentication failed")
                    .contains(KafkaAccessGuard.ATTEMPTS + " times in a row")
                    .doesNotContain("rotating-pw-1"));
  }

  @Test
  void deadLetterAccessLostWhileRunningEndsTheJobAfterBoundedRestarts(@TempDir Path warehouse)
      throws Exception {
    String topic = "dlq-lost-in";
    String deadLetters = "dlq-lost";
    String group = "dlq-lost-group";
    admin
        .createTopics(
            List.of(new NewTopic(topic, 1, (short) 1), new NewTopic(deadLetters, 1, (short) 1)))
        .all()
        .get();
    createUser("dlq-losing", "dlq-losing-pw");
    grant("dlq-losing", ResourceType.TOPIC, topic, AclOperation.READ, AclOperation.DESCRIBE);
    grant("dlq-losing", ResourceType.GROUP, group, AclOperation.READ);
    grant("dlq-losing", ResourceType.TOPIC, deadLetters, AclOperation.WRITE);
    produce(topic, List.of(new TelemetryGenerator(3, 2, 5, 8).next(0).json()));
    JobConfig config =
        config(warehouse, "dlq-losing", "dlq-losing-pw")
            .with(
                Map.of(
                    "kafka.topic", topic,
                    "kafka.group-id", group,
                    "rejects.dead-letter-topic", deadLetters));
    Configuration conf = new Configuration();
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, Integer.MAX_VALUE);
    conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);
    SpatialIngestJob.build(env, config, false);
    JobClient job = env.executeAsync("dlq-lost");
    awaitRunning(job);

    // the dead-letter topic's WRITE is taken away, then rejects arrive
    admin
        .deleteAcls(
            List.of(
                new AclBinding(
                        new ResourcePattern(ResourceType.TOPIC, deadLetters, PatternType.LITERAL),
                        new AccessControlEntry(
                            "User:dlq-losing", "*", AclOperation.WRITE, AclPermissionType.ALLOW))
                    .toFilter()))
        .all()
        .get();
    Thread.sleep(500); // ACLs reach the broker's authorizer through the metadata log
    produce(topic, List.of("{not json".getBytes(StandardCharsets.UTF_8)));

    Throwable failure = null;
    try {
      job.getJobExecutionResult().get(180, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      failure = e;
    } finally {
      if (!job.getJobStatus().get().isTerminalState()) {
        job.cancel().get(60, TimeUnit.SECONDS);
      }
    }
    assertThat(failure).as("the job failed instead of restarting for ever").isNotNull();
    assertThat(ExceptionUtils.findThrowable(failure, KafkaAccessLostException.class))
        .as("ended by the access guard: %s", ExceptionUtils.stringifyException(failure))
        .hasValueSatisfying(
            e ->
                assertThat(e.getMessage())
                    .contains("authorization failed")
                    .contains(deadLetters)
                    .contains(KafkaAccessGuard.ATTEMPTS + " times in a row"));
  }

  private static void assertStartRefused(JobConfig config, String cause, String resource) {
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                SpatialIngestJob.build(
                    StreamExecutionEnvironment.getExecutionEnvironment(), config, true))
        .isInstanceOf(KafkaAccessException.class)
        .hasMessageContaining(cause)
        .hasMessageContaining(resource);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(60));
  }

  private static JobConfig config(Path warehouse, String user, String password) {
    Map<String, String> keys = new HashMap<>();
    keys.put("kafka.properties.security.protocol", "SASL_PLAINTEXT");
    keys.put("kafka.properties.sasl.mechanism", "SCRAM-SHA-512");
    keys.put(
        "kafka.properties.sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user
            + "\" password=\""
            + password
            + "\";");
    keys.put("kafka.group-id", GROUP);
    keys.put("kafka.starting-offsets", "table");
    keys.put("rejects.dead-letter-topic", DEAD_LETTERS);
    keys.put("sink.max-latency", "1s");
    return TestKit.config(cluster.bootstrapServers(), TOPIC, warehouse, keys)
        .with(Map.of("kafka.group-id", GROUP, "kafka.starting-offsets", "table"));
  }

  private static String yaml(JobConfig config) {
    StringBuilder out = new StringBuilder();
    config
        .toMap()
        .forEach((k, v) -> out.append(k).append(": '").append(v.replace("'", "''")).append("'\n"));
    return out.toString();
  }

  private static Properties superUser() {
    Properties p = new Properties();
    p.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrapServers());
    p.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
    p.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
    p.put(
        SaslConfigs.SASL_JAAS_CONFIG,
        "org.apache.kafka.common.security.plain.PlainLoginModule required"
            + " username=\"plain-admin\" password=\"plain-admin-secret\";");
    return p;
  }

  private static void createUser(String user, String password) throws Exception {
    admin
        .alterUserScramCredentials(
            List.of(
                new UserScramCredentialUpsertion(
                    user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password)))
        .all()
        .get();
    // the broker learns the credential from the metadata log: wait until it lists it
    long deadline = System.currentTimeMillis() + 30_000;
    while (!admin.describeUserScramCredentials(List.of(user)).users().get().contains(user)) {
      assertThat(System.currentTimeMillis()).isLessThan(deadline);
      Thread.sleep(100);
    }
    Thread.sleep(500);
  }

  private static void grant(String user, ResourceType type, String name, AclOperation... ops)
      throws Exception {
    List<AclBinding> acls = new ArrayList<>();
    for (AclOperation op : ops) {
      acls.add(
          new AclBinding(
              new ResourcePattern(type, name, PatternType.LITERAL),
              new AccessControlEntry("User:" + user, "*", op, AclPermissionType.ALLOW)));
    }
    admin.createAcls(acls).all().get();
    Thread.sleep(500); // ACLs reach the broker's authorizer through the metadata log
  }

  private static void produce(String topic, List<byte[]> values) throws Exception {
    Properties p = superUser();
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < values.size(); i++) {
        producer.send(new ProducerRecord<>(topic, Integer.toString(i).getBytes(), values.get(i)));
      }
      producer.flush();
    }
  }

  private static long deadLetters() {
    Properties p = superUser();
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition tp = new TopicPartition(DEAD_LETTERS, 0);
      consumer.assign(List.of(tp));
      return consumer.endOffsets(List.of(tp)).get(tp);
    }
  }

  /** The group's committed offsets, summed, once they stop changing (published asynchronously). */
  private static long groupOffsets() throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    long last = -1;
    while (System.currentTimeMillis() < deadline) {
      Map<TopicPartition, OffsetAndMetadata> offsets =
          admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get();
      long sum = offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
      if (sum == last && offsets.size() == 3) {
        return sum;
      }
      last = sum;
      Thread.sleep(500);
    }
    return last;
  }

  private static void awaitRunning(JobClient job) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (job.getJobStatus().get() != org.apache.flink.api.common.JobStatus.RUNNING) {
      assertThat(System.currentTimeMillis()).isLessThan(deadline);
      Thread.sleep(100);
    }
  }
}
