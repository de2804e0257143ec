package example.charges;

import io.redisatomic.spring.RateLimited;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** The endpoints: a charge (idempotent by the filter) and a rate-limited quote. */
@RestController
public class ChargesController {
    private final Ledger ledger;

    public ChargesController(Ledger ledger) {
        this.ledger = ledger;
    }

    @PostMapping(path = "/charges", produces = MediaType.APPLICATION_JSON_VALUE)
    public ResponseEntity<String> charge(@RequestBody String body) {
        int id = ledger.charge(body);
        return ResponseEntity.status(HttpStatus.CREATED).body("{\"charge\":" + id + "}");
    }

    @RateLimited("api")
    @GetMapping(path = "/quotes", produces = MediaType.APPLICATION_JSON_VALUE)
    public String quote() {
        return "{\"eur_usd\":1.08}";
    }

    /** Limited too, but served unlimited when Redis cannot decide (the `news` policy fails open). */
    @RateLimited("news")
    @GetMapping(path = "/headlines", produces = MediaType.APPLICATION_JSON_VALUE)
    public String headlines() {
        return "[\"markets calm\"]";
    }
}
