package example.charges;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A payment-style service: {@code POST /charges} runs once per Idempotency-Key however often a
 * client retries it (the starter's filter), {@code GET /quotes} is rate-limited per API key (the
 * {@code api} policy of application.properties). Redis comes from {@code spring.data.redis.*}.
 */
@SpringBootApplication
public class ChargesApplication {
    public static void main(String[] args) {
        SpringApplication.run(ChargesApplication.class, args);
    }
}
