import SplitMix
import Testing
@testable import Broker

@Suite struct SocketSubscriptionIndexTests {
    private func filter(_ text: String) throws -> TopicFilter { try TopicFilter(parsing: text) }

    @Test func groupsSubscribersByFilter() throws {
        var index = SubscriptionIndex<Int>()
        for client in 0..<5 { index.subscribe(client, to: try filter("found/#")) }
        index.subscribe(7, to: try filter("lost/+/+"))
        #expect(index.filterCount == 2)
        #expect(Set(index.subscribers(of: "found/ns/type")) == Set(0..<5))
        #expect(index.subscribers(of: "lost/ns/type") == [7])
        #expect(index.subscribers(of: "$SYS/dropped").isEmpty)
    }

    @Test func aSubscriberMatchedByTwoFiltersIsListedOnce() throws {
        var index = SubscriptionIndex<Int>()
        index.subscribe(1, to: try filter("#"))
        index.subscribe(1, to: try filter("found/+/+"))
        index.subscribe(2, to: try filter("found/+/+"))
        index.subscribe(1, to: try filter("found/+/+"))   // twice: still one subscription
        #expect(index.subscribers(of: "found/a/b").sorted() == [1, 2])
    }

    @Test func changesInvalidateTheTopicCache() throws {
        var index = SubscriptionIndex<Int>()
        index.subscribe(1, to: try filter("found/#"))
        #expect(index.subscribers(of: "found/a/b") == [1])
        index.subscribe(2, to: try filter("found/a/+"))
        #expect(index.subscribers(of: "found/a/b").sorted() == [1, 2])
        index.unsubscribe(1, from: try filter("found/#"))
        #expect(index.subscribers(of: "found/a/b") == [2])
        index.remove(2, filters: [try filter("found/a/+")])
        #expect(index.subscribers(of: "found/a/b").isEmpty)
        #expect(index.filterCount == 0)
        index.unsubscribe(3, from: try filter("never/subscribed"))   // harmless
    }

    @Test func dollarTopicsAreNotMatchedByLeadingWildcards() throws {
        var index = SubscriptionIndex<Int>()
        index.subscribe(1, to: try filter("#"))
        index.subscribe(2, to: try filter("+/dropped"))
        index.subscribe(3, to: try filter("$SYS/#"))
        #expect(index.subscribers(of: "$SYS/dropped") == [3])
    }

    @Test func theTopicCacheStartsOverWhenFull() throws {
        var index = SubscriptionIndex<Int>()
        index.subscribe(1, to: try filter("t/+"))
        for n in 0..<(SubscriptionIndex<Int>.topicCacheLimit * 2 + 3) {
            #expect(index.subscribers(of: "t/\(n)") == [1])
        }
        #expect(index.subscribers(of: "t/0") == [1])
    }

    /// The index against the broker's former rule (every client's every filter, matched one by one),
    /// on random subscribe/unsubscribe/remove sequences over a small alphabet, so that wildcards,
    /// empty levels, `$` topics and clients with overlapping filters are common.
    @Test func agreesWithMatchingEveryFilterOnRandomInputs() throws {
        var rng = SeededGenerator(seed: 0xFA_2026)
        let filterAlphabet: [Character] = ["a", "b", "/", "/", "+", "#", "$"]
        let topicAlphabet: [Character] = ["a", "b", "/", "$"]
        func random(_ alphabet: [Character]) -> String {
            String((0..<Int(rng.next() % 6 + 1)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        }
        var index = SubscriptionIndex<Int>()
        var naive: [Int: [TopicFilter]] = [:]   // client → its filters, as BrokerClient.subscriptions
        var topics: [String] = []
        var compared = 0
        for step in 0..<20_000 {
            let client = Int(rng.next() % 12)
            switch rng.next() % 10 {
            case 0..<4:
                guard let parsed = try? TopicFilter(parsing: random(filterAlphabet)) else { continue }
                if !(naive[client]?.contains(parsed) ?? false) { naive[client, default: []].append(parsed) }
                index.subscribe(client, to: parsed)
            case 4..<6:
                guard let filters = naive[client], !filters.isEmpty else { continue }
                let parsed = filters[Int(rng.next() % UInt64(filters.count))]
                naive[client]?.removeAll { $0 == parsed }
                index.unsubscribe(client, from: parsed)
            case 6:
                index.remove(client, filters: naive[client] ?? [])
                naive[client] = nil
            default:
                // Revisit earlier topics too, so cached answers are checked after changes.
                let topic = topics.isEmpty || rng.next() % 2 == 0 ? random(topicAlphabet) : topics[Int(rng.next() % UInt64(topics.count))]
                topics.append(topic)
                let expected = Set(naive.filter { $0.value.contains { $0.matches(topic) } }.keys)
                let got = index.subscribers(of: topic)
                #expect(got.count == Set(got).count, "duplicates for \(topic) at step \(step)")
                #expect(Set(got) == expected, "\(topic) at step \(step)")
                compared += 1
            }
        }
        #expect(compared > 5_000)
    }
}
