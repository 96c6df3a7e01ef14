"""Hand-written English questions for the 'mixed' dev set (bench/devsets.py).

NEWS_QUESTIONS name a PUD article by its index (bench/devsets.py numbers the articles
in order; article i is in ARTICLE_LANGUAGES[i % 11], never English for these). Each asks
about one fact of that article in other words than the article's English original, the
way a person remembers a story they read. DOC_QUESTIONS name a real document by its
path in the dev set's folder.
"""

NEWS_QUESTIONS = [
    (2, "How much did it cost to build the NoMa infill Metro station?"),
    (3, "what share of votes was cast before Election Day in 1996"),
    (4, "mother charged with smothering her son on an air mattress"),
    (5, "Royal Navy orders promised to keep shipbuilding on the Clyde"),
    (6, "Huawei could profit from Samsung's phone battery problems"),
    (7, "is internet access on British Airways flights reliable"),
    (8, "a cyber security course certified by GCHQ"),
    (9, "China shows new military jets and its civil aviation ambitions at an air show"),
    (11, "drilling off the Mexican coast for traces of the asteroid that killed the dinosaurs"),
    (12, "the international trade in human hair for wigs and extensions"),
    (14, "Steven Seagal's visits to Russia and what he said about Crimea"),
    (15, "a fight broke out on the set of Alfonso Cuaron's film"),
    (16, "the more cigarettes people smoke, the more mutations their tumours carry"),
    (17, "Trudeau will invite the next American president to Canada"),
    (18, "what is the highest fine Ontario can give a real estate agent"),
    (19, "big new emitters such as Brazil, India and China are doing more to cut emissions"),
    (20, "doctors say pain patients are losing access to their medication"),
    (22, "police in Quebec spied on journalists"),
    (23, "customers love unlimited mobile data plans"),
    (25, "an unborn baby had a rare tumour growing from its tailbone"),
    (27, "how the moon formed from a ring of debris around the Earth"),
    (33, "railway historian Christian Wolmar stands in a by-election"),
    (34, "Delhi shuts a coal power station because of smog"),
    (40, "bank accounts that pay 3% interest, such as Tesco's"),
    (41, "British soils lack sulphur, which plants need to grow"),
    (42, "a jewellery designer who studied at Glasgow School of Art and loves retro style"),
    (45, "the EU wants to cut cod catches in the Celtic Sea"),
    (47, "a train journey where a man taps the wheels with a hammer at every station"),
    (48, "Beijing steps in over the oath sworn by Hong Kong lawmakers"),
    (51, "investigation of Martin Winterkorn over the Volkswagen emissions scandal"),
    (52, "British businesses kept growing after the Brexit vote"),
    (53, "how much prize money Premium Bonds pay on average"),
    (55, "how many adults were hurt because of bad winter weather in Britain"),
    (58, "a review of a family film about a cat named Bob"),
]

DOC_QUESTIONS = [
    ("how can a program call a function whose calling convention is only known at run time",
     "manuals/libffi/Introduction.html"),
    ("is libffi safe to use from several threads", "manuals/libffi/Thread-Safety.html"),
    ("libffi does not support variadic closures or bit fields", "manuals/libffi/Missing-Features.html"),
    ("why closure memory does not come from malloc", "manuals/libffi/Memory-Usage.html"),
    ("stdcall and fastcall functions on x86", "manuals/libffi/Multiple-ABIs.html"),
    ("options of asn1Parser to check the syntax of an ASN.1 file", "specs/libtasn1.pdf"),
    ("in which directories the shared MIME database is stored", "specs/shared-mime-info-spec.pdf"),
    ("which search tool calls itself the fastest in the west", "readme/grep-README.txt"),
    ("a lightweight command-line processor for JSON", "readme/jq-README.txt"),
    ("how to test the zstd compression tool", "readme/zstd-TESTING.md"),
]
