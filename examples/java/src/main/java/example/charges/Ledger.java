package example.charges;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Component;

/** Where charges land (in memory here; a payment provider in a real service): the side effect to run once. */
@Component
public class Ledger {
    private final List<String> charges = new CopyOnWriteArrayList<>();

    /** Records a charge; its position is its id. */
    public int charge(String body) {
        synchronized (charges) {
            charges.add(body);
            return charges.size();
        }
    }

    public List<String> charges() {
        return List.copyOf(charges);
    }
}
