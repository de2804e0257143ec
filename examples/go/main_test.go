package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	redisatomic "github.com/redis-atomic/redis-atomic/bindings/go"
	"github.com/redis-atomic/redis-atomic/bindings/go/redisatomictest"
)

// The service on a real server: an order posted twice with one key is created once (the second
// answer is the replay); a request without an API key is refused.
func TestOrders(t *testing.T) {
	srv := redisatomictest.Start(t)
	client, err := redisatomic.Connect(context.Background(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	mux, err := routes(client)
	if err != nil {
		t.Fatal(err)
	}
	var locations []string
	for range 2 {
		req := httptest.NewRequest("POST", "/orders", nil)
		req.Header.Set("X-Api-Key", "k1")
		req.Header.Set("Idempotency-Key", "abc")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			t.Fatalf("status %d", rec.Code)
		}
		locations = append(locations, rec.Header().Get("Location"))
	}
	if locations[0] != locations[1] {
		t.Fatalf("two orders created: %v", locations)
	}
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("POST", "/orders", nil))
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("no API key: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("POST", "/reports/7", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("report: %d", rec.Code)
	}
}
