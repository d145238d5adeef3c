import ArgumentParser
import FoundationEssentials
import NearbyProtocol
import SystemCall

struct BenchCorpusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "corpus", abstract: "Write the seeded advert corpus (LE Advertising Report events).")

    @Option(help: "Reports in the corpus.") var reports = 1_000_000
    @Option(help: "Seed of the generator.") var seed: UInt64 = 1
    @Option(help: "Output file.") var out: String

    func run() throws {
        let corpus = try AdvertCorpus.generate(reports: reports, seed: seed)
        try corpus.write(to: out)
        BenchJSON.print(["events": corpus.events.count, "reports": corpus.reportCount, "path": out])
    }
}

struct BenchPipelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline", abstract: "Time HCI parse, AD parse and the whole advert pipeline over a corpus.")

    @Option(help: "Corpus file (from 'bench corpus').") var corpus: String
    @Option(help: "Timed passes per stage; the best counts. 0 = count allocations only.") var repetitions = 3
    @Option(help: "Comma-separated stages to run (hci_parse, ad_walk, ad_values, pipeline).")
    var only: String?

    func run() throws {
        let corpus = try AdvertCorpus.read(from: corpus)
        let bench = PipelineBench(corpus: corpus, repetitions: repetitions,
                                  only: only.map { Set($0.split(separator: ",").map(String.init)) })
        let (stages, outcomes) = bench.run()
        BenchJSON.print([
            "stages": stages.map(\.json), "outcomes": outcomes.json, "allocations_counted": MallocCounter() != nil,
        ])
    }
}

/// The benchmark commands' one line of JSON (keys sorted, like JSONSerialization's `.sortedKeys`,
/// which this replaces so the binary links no Foundation). Numbers, booleans, strings, arrays and
/// objects; a non-finite number is null.
enum BenchJSON {
    static func print(_ object: [String: Any]) {
        Swift.print(text(object))
    }

    static func text(_ value: Any) -> String {
        switch value {
        case let flag as Bool: flag ? "true" : "false"
        case let number as any BinaryInteger: "\(number)"
        case let number as any BinaryFloatingPoint: Double(number).isFinite ? "\(Double(number))" : "null"
        case let string as String: JSONObjectWriter.quote(string)
        case let object as [String: Any]:
            "{" + object.keys.sorted().map { JSONObjectWriter.quote($0) + ":" + text(object[$0]!) }.joined(separator: ",") + "}"
        case let array as [Any]: "[" + array.map(text).joined(separator: ",") + "]"
        default: "null"
        }
    }
}

/// One unbuffered line on stdout: the hand-shake with tools/bench/run.py (READY, PUBLISHED).
func benchSay(_ line: String) {
    Console.out(line + "\n")
}
