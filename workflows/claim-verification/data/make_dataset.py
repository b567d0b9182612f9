"""Generate ``claims.tsv``, a small claim-verification (fact-checking) dataset.

Each row pairs a short *claim* with one *evidence* sentence and a FEVER-style label:

- ``SUPPORTS``: the evidence states the fact and the claim paraphrases it.
- ``REFUTES``: the evidence states the fact and the claim contradicts it, either by
  swapping in a wrong entity of the same type ("The capital of France is Berlin.")
  or by negating the fact ("Paris is not the capital of France.").
- ``NOT_ENOUGH_INFO``: the evidence states a different fact (another relation of the
  same subject, or a fact about unrelated entities), so it neither supports nor
  refutes the claim. Half of these claims are true in the world and half are false,
  so world knowledge alone cannot tell ``NOT_ENOUGH_INFO`` apart from the other labels.

The facts are curated by hand and embedded below as Python data: countries with their
capitals, continents and currencies; chemical elements with their symbols and atomic
numbers; the order of the planets; books and their authors; paintings and their
painters; inventions and their inventors; musical works and their composers; animals
and their classes; programming languages and their creators; rivers with the cities
and continents they flow through; and mountains with their ranges and countries.
Only functional relations are used (each subject has exactly one object), so swapping
in another object of the same relation always yields a false claim. Ambiguous or
disputed facts (transcontinental countries, border mountains for the country relation,
contested inventions) were left out on purpose.

Every fact yields rows for two of the three labels, rotated so that the labels stay
balanced. Rows are then split, stratified by label, into about 30% ``train`` and 70%
``test``, shuffled and numbered ``c0001``, ``c0002``, ... All randomness comes from one
``random.Random(seed)``, so the output is byte-identical on every run for a given seed.

Usage::

    python make_dataset.py [--out PATH] [--seed 13]

The script uses only the standard library and writes the TSV atomically.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_SEED = 13
DEFAULT_OUT = Path(__file__).resolve().parent / "claims.tsv"
TRAIN_FRACTION = 0.3
NEGATION_FRACTION = 0.25
COLUMNS = ("claim_id", "split", "label", "claim", "evidence")
SUPPORTS = "SUPPORTS"
REFUTES = "REFUTES"
NOT_ENOUGH_INFO = "NOT_ENOUGH_INFO"
LABELS = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO)
LABEL_PAIRS = ((SUPPORTS, REFUTES), (SUPPORTS, NOT_ENOUGH_INFO), (REFUTES, NOT_ENOUGH_INFO))

# ---------------------------------------------------------------------------
# Curated facts. Names carry their article where English needs one ("the Nile").
# ---------------------------------------------------------------------------

# (country, capital, continent or None when the country spans two continents)
COUNTRIES: tuple[tuple[str, str, str | None], ...] = (
    ("France", "Paris", "Europe"),
    ("Germany", "Berlin", "Europe"),
    ("Italy", "Rome", "Europe"),
    ("Spain", "Madrid", "Europe"),
    ("Portugal", "Lisbon", "Europe"),
    ("the United Kingdom", "London", "Europe"),
    ("Ireland", "Dublin", "Europe"),
    ("Belgium", "Brussels", "Europe"),
    ("the Netherlands", "Amsterdam", "Europe"),
    ("Austria", "Vienna", "Europe"),
    ("Poland", "Warsaw", "Europe"),
    ("the Czech Republic", "Prague", "Europe"),
    ("Slovakia", "Bratislava", "Europe"),
    ("Slovenia", "Ljubljana", "Europe"),
    ("Hungary", "Budapest", "Europe"),
    ("Greece", "Athens", "Europe"),
    ("Sweden", "Stockholm", "Europe"),
    ("Norway", "Oslo", "Europe"),
    ("Denmark", "Copenhagen", "Europe"),
    ("Finland", "Helsinki", "Europe"),
    ("Iceland", "Reykjavík", "Europe"),
    ("Estonia", "Tallinn", "Europe"),
    ("Latvia", "Riga", "Europe"),
    ("Lithuania", "Vilnius", "Europe"),
    ("Russia", "Moscow", None),
    ("Ukraine", "Kyiv", "Europe"),
    ("Romania", "Bucharest", "Europe"),
    ("Bulgaria", "Sofia", "Europe"),
    ("Serbia", "Belgrade", "Europe"),
    ("Croatia", "Zagreb", "Europe"),
    ("Turkey", "Ankara", None),
    ("Japan", "Tokyo", "Asia"),
    ("China", "Beijing", "Asia"),
    ("South Korea", "Seoul", "Asia"),
    ("India", "New Delhi", "Asia"),
    ("Pakistan", "Islamabad", "Asia"),
    ("Bangladesh", "Dhaka", "Asia"),
    ("Nepal", "Kathmandu", "Asia"),
    ("Mongolia", "Ulaanbaatar", "Asia"),
    ("Thailand", "Bangkok", "Asia"),
    ("Vietnam", "Hanoi", "Asia"),
    ("Cambodia", "Phnom Penh", "Asia"),
    ("Laos", "Vientiane", "Asia"),
    ("the Philippines", "Manila", "Asia"),
    ("Iran", "Tehran", "Asia"),
    ("Iraq", "Baghdad", "Asia"),
    ("Syria", "Damascus", "Asia"),
    ("Jordan", "Amman", "Asia"),
    ("Lebanon", "Beirut", "Asia"),
    ("Saudi Arabia", "Riyadh", "Asia"),
    ("Qatar", "Doha", "Asia"),
    ("Afghanistan", "Kabul", "Asia"),
    ("Egypt", "Cairo", None),
    ("Kenya", "Nairobi", "Africa"),
    ("Ethiopia", "Addis Ababa", "Africa"),
    ("Nigeria", "Abuja", "Africa"),
    ("Ghana", "Accra", "Africa"),
    ("Senegal", "Dakar", "Africa"),
    ("Mali", "Bamako", "Africa"),
    ("Morocco", "Rabat", "Africa"),
    ("Algeria", "Algiers", "Africa"),
    ("Tunisia", "Tunis", "Africa"),
    ("Uganda", "Kampala", "Africa"),
    ("Angola", "Luanda", "Africa"),
    ("Zambia", "Lusaka", "Africa"),
    ("Zimbabwe", "Harare", "Africa"),
    ("Canada", "Ottawa", "North America"),
    ("the United States", "Washington, D.C.", "North America"),
    ("Mexico", "Mexico City", "North America"),
    ("Guatemala", "Guatemala City", "North America"),
    ("Honduras", "Tegucigalpa", "North America"),
    ("Costa Rica", "San José", "North America"),
    ("Panama", "Panama City", "North America"),
    ("Cuba", "Havana", "North America"),
    ("Jamaica", "Kingston", "North America"),
    ("Brazil", "Brasília", "South America"),
    ("Argentina", "Buenos Aires", "South America"),
    ("Chile", "Santiago", "South America"),
    ("Peru", "Lima", "South America"),
    ("Colombia", "Bogotá", "South America"),
    ("Venezuela", "Caracas", "South America"),
    ("Ecuador", "Quito", "South America"),
    ("Uruguay", "Montevideo", "South America"),
    ("Paraguay", "Asunción", "South America"),
    ("Australia", "Canberra", "Oceania"),
    ("New Zealand", "Wellington", "Oceania"),
    ("Fiji", "Suva", "Oceania"),
    ("Papua New Guinea", "Port Moresby", "Oceania"),
)

# (country, official currency)
CURRENCIES: tuple[tuple[str, str], ...] = (
    ("Japan", "the Japanese yen"),
    ("the United Kingdom", "the pound sterling"),
    ("the United States", "the United States dollar"),
    ("Canada", "the Canadian dollar"),
    ("Australia", "the Australian dollar"),
    ("New Zealand", "the New Zealand dollar"),
    ("Switzerland", "the Swiss franc"),
    ("India", "the Indian rupee"),
    ("Pakistan", "the Pakistani rupee"),
    ("China", "the renminbi"),
    ("South Korea", "the South Korean won"),
    ("Russia", "the Russian ruble"),
    ("Mexico", "the Mexican peso"),
    ("Brazil", "the Brazilian real"),
    ("Argentina", "the Argentine peso"),
    ("Chile", "the Chilean peso"),
    ("Colombia", "the Colombian peso"),
    ("the Philippines", "the Philippine peso"),
    ("South Africa", "the South African rand"),
    ("Nigeria", "the Nigerian naira"),
    ("Egypt", "the Egyptian pound"),
    ("Kenya", "the Kenyan shilling"),
    ("Ghana", "the Ghanaian cedi"),
    ("Morocco", "the Moroccan dirham"),
    ("Sweden", "the Swedish krona"),
    ("Norway", "the Norwegian krone"),
    ("Denmark", "the Danish krone"),
    ("Iceland", "the Icelandic króna"),
    ("Poland", "the Polish złoty"),
    ("the Czech Republic", "the Czech koruna"),
    ("Hungary", "the Hungarian forint"),
    ("Turkey", "the Turkish lira"),
    ("Ukraine", "the Ukrainian hryvnia"),
    ("Thailand", "the Thai baht"),
    ("Vietnam", "the Vietnamese dong"),
    ("Indonesia", "the Indonesian rupiah"),
    ("Bangladesh", "the Bangladeshi taka"),
    ("Saudi Arabia", "the Saudi riyal"),
    ("Peru", "the Peruvian sol"),
    ("Germany", "the euro"),
    ("France", "the euro"),
    ("Italy", "the euro"),
    ("Spain", "the euro"),
    ("Greece", "the euro"),
)

# (element, symbol, atomic number)
ELEMENTS: tuple[tuple[str, str, int], ...] = (
    ("hydrogen", "H", 1),
    ("helium", "He", 2),
    ("lithium", "Li", 3),
    ("beryllium", "Be", 4),
    ("boron", "B", 5),
    ("carbon", "C", 6),
    ("nitrogen", "N", 7),
    ("oxygen", "O", 8),
    ("fluorine", "F", 9),
    ("neon", "Ne", 10),
    ("sodium", "Na", 11),
    ("magnesium", "Mg", 12),
    ("aluminium", "Al", 13),
    ("silicon", "Si", 14),
    ("phosphorus", "P", 15),
    ("sulfur", "S", 16),
    ("chlorine", "Cl", 17),
    ("argon", "Ar", 18),
    ("potassium", "K", 19),
    ("calcium", "Ca", 20),
    ("titanium", "Ti", 22),
    ("chromium", "Cr", 24),
    ("manganese", "Mn", 25),
    ("iron", "Fe", 26),
    ("cobalt", "Co", 27),
    ("nickel", "Ni", 28),
    ("copper", "Cu", 29),
    ("zinc", "Zn", 30),
    ("arsenic", "As", 33),
    ("bromine", "Br", 35),
    ("krypton", "Kr", 36),
    ("silver", "Ag", 47),
    ("tin", "Sn", 50),
    ("iodine", "I", 53),
    ("xenon", "Xe", 54),
    ("tungsten", "W", 74),
    ("platinum", "Pt", 78),
    ("gold", "Au", 79),
    ("mercury", "Hg", 80),
    ("lead", "Pb", 82),
    ("radon", "Rn", 86),
    ("uranium", "U", 92),
    ("plutonium", "Pu", 94),
)

PLANETS: tuple[str, ...] = (
    "Mercury",
    "Venus",
    "Earth",
    "Mars",
    "Jupiter",
    "Saturn",
    "Uranus",
    "Neptune",
)

# (book or play, author)
BOOKS: tuple[tuple[str, str], ...] = (
    ("Pride and Prejudice", "Jane Austen"),
    ("Sense and Sensibility", "Jane Austen"),
    ("Emma", "Jane Austen"),
    ("Oliver Twist", "Charles Dickens"),
    ("Great Expectations", "Charles Dickens"),
    ("A Tale of Two Cities", "Charles Dickens"),
    ("David Copperfield", "Charles Dickens"),
    ("Moby-Dick", "Herman Melville"),
    ("War and Peace", "Leo Tolstoy"),
    ("Anna Karenina", "Leo Tolstoy"),
    ("Crime and Punishment", "Fyodor Dostoevsky"),
    ("The Brothers Karamazov", "Fyodor Dostoevsky"),
    ("Don Quixote", "Miguel de Cervantes"),
    ("Hamlet", "William Shakespeare"),
    ("Macbeth", "William Shakespeare"),
    ("Romeo and Juliet", "William Shakespeare"),
    ("One Hundred Years of Solitude", "Gabriel García Márquez"),
    ("Nineteen Eighty-Four", "George Orwell"),
    ("Animal Farm", "George Orwell"),
    ("Brave New World", "Aldous Huxley"),
    ("The Great Gatsby", "F. Scott Fitzgerald"),
    ("To Kill a Mockingbird", "Harper Lee"),
    ("The Catcher in the Rye", "J. D. Salinger"),
    ("Frankenstein", "Mary Shelley"),
    ("Dracula", "Bram Stoker"),
    ("Jane Eyre", "Charlotte Brontë"),
    ("Wuthering Heights", "Emily Brontë"),
    ("The Old Man and the Sea", "Ernest Hemingway"),
    ("A Farewell to Arms", "Ernest Hemingway"),
    ("Ulysses", "James Joyce"),
    ("The Hobbit", "J. R. R. Tolkien"),
    ("The Lord of the Rings", "J. R. R. Tolkien"),
    ("Les Misérables", "Victor Hugo"),
    ("The Hunchback of Notre-Dame", "Victor Hugo"),
    ("The Count of Monte Cristo", "Alexandre Dumas"),
    ("The Three Musketeers", "Alexandre Dumas"),
    ("Madame Bovary", "Gustave Flaubert"),
    ("The Trial", "Franz Kafka"),
    ("The Metamorphosis", "Franz Kafka"),
    ("The Divine Comedy", "Dante Alighieri"),
    ("Things Fall Apart", "Chinua Achebe"),
    ("Beloved", "Toni Morrison"),
    ("The Adventures of Tom Sawyer", "Mark Twain"),
    ("Adventures of Huckleberry Finn", "Mark Twain"),
    ("Fahrenheit 451", "Ray Bradbury"),
    ("Lolita", "Vladimir Nabokov"),
    ("The Grapes of Wrath", "John Steinbeck"),
    ("Of Mice and Men", "John Steinbeck"),
    ("Mrs Dalloway", "Virginia Woolf"),
    ("To the Lighthouse", "Virginia Woolf"),
    ("Faust", "Johann Wolfgang von Goethe"),
    ("The Little Prince", "Antoine de Saint-Exupéry"),
    ("The Stranger", "Albert Camus"),
    ("Gulliver's Travels", "Jonathan Swift"),
    ("Robinson Crusoe", "Daniel Defoe"),
    ("Treasure Island", "Robert Louis Stevenson"),
    ("The Picture of Dorian Gray", "Oscar Wilde"),
    ("Heart of Darkness", "Joseph Conrad"),
    ("The Name of the Rose", "Umberto Eco"),
    ("Midnight's Children", "Salman Rushdie"),
    ("Dune", "Frank Herbert"),
    ("Around the World in Eighty Days", "Jules Verne"),
    ("Twenty Thousand Leagues Under the Seas", "Jules Verne"),
    ("The Hound of the Baskervilles", "Arthur Conan Doyle"),
    ("The Time Machine", "H. G. Wells"),
    ("The War of the Worlds", "H. G. Wells"),
    ("Catch-22", "Joseph Heller"),
    ("Slaughterhouse-Five", "Kurt Vonnegut"),
    ("Doctor Zhivago", "Boris Pasternak"),
    ("The Master and Margarita", "Mikhail Bulgakov"),
    ("The Tale of Genji", "Murasaki Shikibu"),
    ("The Handmaid's Tale", "Margaret Atwood"),
    ("Middlemarch", "George Eliot"),
)

# (painting, painter)
PAINTINGS: tuple[tuple[str, str], ...] = (
    ("the Mona Lisa", "Leonardo da Vinci"),
    ("The Last Supper", "Leonardo da Vinci"),
    ("The Starry Night", "Vincent van Gogh"),
    ("Café Terrace at Night", "Vincent van Gogh"),
    ("The Potato Eaters", "Vincent van Gogh"),
    ("The Night Watch", "Rembrandt"),
    ("Girl with a Pearl Earring", "Johannes Vermeer"),
    ("The Milkmaid", "Johannes Vermeer"),
    ("The Birth of Venus", "Sandro Botticelli"),
    ("Primavera", "Sandro Botticelli"),
    ("Guernica", "Pablo Picasso"),
    ("Les Demoiselles d'Avignon", "Pablo Picasso"),
    ("The Persistence of Memory", "Salvador Dalí"),
    ("The Scream", "Edvard Munch"),
    ("Impression, Sunrise", "Claude Monet"),
    ("Woman with a Parasol", "Claude Monet"),
    ("The Creation of Adam", "Michelangelo"),
    ("American Gothic", "Grant Wood"),
    ("The Garden of Earthly Delights", "Hieronymus Bosch"),
    ("Las Meninas", "Diego Velázquez"),
    ("Liberty Leading the People", "Eugène Delacroix"),
    ("The Third of May 1808", "Francisco Goya"),
    ("Saturn Devouring His Son", "Francisco Goya"),
    ("A Sunday Afternoon on the Island of La Grande Jatte", "Georges Seurat"),
    ("Nighthawks", "Edward Hopper"),
    ("The School of Athens", "Raphael"),
    ("The Arnolfini Portrait", "Jan van Eyck"),
    ("Luncheon of the Boating Party", "Pierre-Auguste Renoir"),
    ("Bal du moulin de la Galette", "Pierre-Auguste Renoir"),
    ("The Hay Wain", "John Constable"),
    ("The Fighting Temeraire", "J. M. W. Turner"),
    ("The Son of Man", "René Magritte"),
    ("Christina's World", "Andrew Wyeth"),
    ("The Two Fridas", "Frida Kahlo"),
    ("The Hunters in the Snow", "Pieter Bruegel the Elder"),
    ("The Raft of the Medusa", "Théodore Géricault"),
    ("Wanderer above the Sea of Fog", "Caspar David Friedrich"),
    ("Olympia", "Édouard Manet"),
    ("The Card Players", "Paul Cézanne"),
    ("The Sleeping Gypsy", "Henri Rousseau"),
    ("The Swing", "Jean-Honoré Fragonard"),
    ("The Gleaners", "Jean-François Millet"),
    ("Whistlejacket", "George Stubbs"),
    ("The Blue Boy", "Thomas Gainsborough"),
    ("The Ambassadors", "Hans Holbein the Younger"),
    ("The Calling of Saint Matthew", "Caravaggio"),
    ("The Death of Marat", "Jacques-Louis David"),
    ("Marilyn Diptych", "Andy Warhol"),
)

# (invention, the person usually credited with it)
INVENTIONS: tuple[tuple[str, str], ...] = (
    ("the telephone", "Alexander Graham Bell"),
    ("the phonograph", "Thomas Edison"),
    ("the World Wide Web", "Tim Berners-Lee"),
    ("dynamite", "Alfred Nobel"),
    ("the diesel engine", "Rudolf Diesel"),
    ("the cotton gin", "Eli Whitney"),
    ("the lightning rod", "Benjamin Franklin"),
    ("the mercury thermometer", "Daniel Gabriel Fahrenheit"),
    ("the mercury barometer", "Evangelista Torricelli"),
    ("the electric battery", "Alessandro Volta"),
    ("the safety elevator", "Elisha Otis"),
    ("the Braille writing system", "Louis Braille"),
    ("the Rubik's Cube", "Ernő Rubik"),
    ("the ballpoint pen", "László Bíró"),
    ("the stethoscope", "René Laennec"),
    ("the Bunsen burner", "Robert Bunsen"),
    ("pasteurization", "Louis Pasteur"),
    ("the cyclotron", "Ernest Lawrence"),
    ("the slide rule", "William Oughtred"),
    ("the Pascaline calculator", "Blaise Pascal"),
    ("the Tesla coil", "Nikola Tesla"),
    ("the vulcanization of rubber", "Charles Goodyear"),
    ("the saxophone", "Adolphe Sax"),
    ("the Stirling engine", "Robert Stirling"),
    ("the Davy lamp", "Humphry Davy"),
    ("the spinning jenny", "James Hargreaves"),
    ("the flying shuttle", "John Kay"),
    ("the mechanical reaper", "Cyrus McCormick"),
    ("the hovercraft", "Christopher Cockerell"),
    ("the Gatling gun", "Richard Gatling"),
    ("the marine chronometer", "John Harrison"),
    ("the seed drill", "Jethro Tull"),
    ("the hydraulic press", "Joseph Bramah"),
    ("lithography", "Alois Senefelder"),
    ("the instant camera", "Edwin Land"),
    ("Kevlar", "Stephanie Kwolek"),
    ("the Jacquard loom", "Joseph Marie Jacquard"),
    ("the microwave oven", "Percy Spencer"),
)

# (musical work, composer)
COMPOSITIONS: tuple[tuple[str, str], ...] = (
    ("The Magic Flute", "Wolfgang Amadeus Mozart"),
    ("Don Giovanni", "Wolfgang Amadeus Mozart"),
    ("The Marriage of Figaro", "Wolfgang Amadeus Mozart"),
    ("Eine kleine Nachtmusik", "Wolfgang Amadeus Mozart"),
    ("the Moonlight Sonata", "Ludwig van Beethoven"),
    ("Für Elise", "Ludwig van Beethoven"),
    ("the Eroica Symphony", "Ludwig van Beethoven"),
    ("Fidelio", "Ludwig van Beethoven"),
    ("The Four Seasons", "Antonio Vivaldi"),
    ("the Mass in B minor", "Johann Sebastian Bach"),
    ("the St Matthew Passion", "Johann Sebastian Bach"),
    ("The Rite of Spring", "Igor Stravinsky"),
    ("The Firebird", "Igor Stravinsky"),
    ("Swan Lake", "Pyotr Ilyich Tchaikovsky"),
    ("The Nutcracker", "Pyotr Ilyich Tchaikovsky"),
    ("the 1812 Overture", "Pyotr Ilyich Tchaikovsky"),
    ("Boléro", "Maurice Ravel"),
    ("Clair de lune", "Claude Debussy"),
    ("La Mer", "Claude Debussy"),
    ("The Blue Danube", "Johann Strauss II"),
    ("Messiah", "George Frideric Handel"),
    ("Water Music", "George Frideric Handel"),
    ("Carmen", "Georges Bizet"),
    ("La traviata", "Giuseppe Verdi"),
    ("Aida", "Giuseppe Verdi"),
    ("Rigoletto", "Giuseppe Verdi"),
    ("Madama Butterfly", "Giacomo Puccini"),
    ("La bohème", "Giacomo Puccini"),
    ("Tosca", "Giacomo Puccini"),
    ("the William Tell Overture", "Gioachino Rossini"),
    ("The Planets", "Gustav Holst"),
    ("Rhapsody in Blue", "George Gershwin"),
    ("In the Hall of the Mountain King", "Edvard Grieg"),
    ("Liebestraum No. 3", "Franz Liszt"),
    ("the Ride of the Valkyries", "Richard Wagner"),
    ("Tristan und Isolde", "Richard Wagner"),
    ("Pictures at an Exhibition", "Modest Mussorgsky"),
    ("Symphonie fantastique", "Hector Berlioz"),
    ("The Carnival of the Animals", "Camille Saint-Saëns"),
    ("Also sprach Zarathustra", "Richard Strauss"),
    ("the Minute Waltz", "Frédéric Chopin"),
    ("the Trout Quintet", "Franz Schubert"),
    ("Adagio for Strings", "Samuel Barber"),
    ("Canon in D", "Johann Pachelbel"),
    ("the New World Symphony", "Antonín Dvořák"),
    ("Finlandia", "Jean Sibelius"),
    ("Peter and the Wolf", "Sergei Prokofiev"),
    ("Carmina Burana", "Carl Orff"),
    ("The Lark Ascending", "Ralph Vaughan Williams"),
)

# (animal, class in everyday zoological terms)
ANIMALS: tuple[tuple[str, str], ...] = (
    ("dolphin", "mammal"),
    ("blue whale", "mammal"),
    ("orca", "mammal"),
    ("bat", "mammal"),
    ("platypus", "mammal"),
    ("kangaroo", "mammal"),
    ("elephant", "mammal"),
    ("giraffe", "mammal"),
    ("koala", "mammal"),
    ("polar bear", "mammal"),
    ("walrus", "mammal"),
    ("hedgehog", "mammal"),
    ("manatee", "mammal"),
    ("pangolin", "mammal"),
    ("sloth", "mammal"),
    ("armadillo", "mammal"),
    ("penguin", "bird"),
    ("ostrich", "bird"),
    ("emu", "bird"),
    ("owl", "bird"),
    ("bald eagle", "bird"),
    ("flamingo", "bird"),
    ("kiwi", "bird"),
    ("hummingbird", "bird"),
    ("albatross", "bird"),
    ("pelican", "bird"),
    ("puffin", "bird"),
    ("crow", "bird"),
    ("crocodile", "reptile"),
    ("alligator", "reptile"),
    ("sea turtle", "reptile"),
    ("tortoise", "reptile"),
    ("Komodo dragon", "reptile"),
    ("iguana", "reptile"),
    ("king cobra", "reptile"),
    ("anaconda", "reptile"),
    ("chameleon", "reptile"),
    ("gecko", "reptile"),
    ("tuatara", "reptile"),
    ("Gila monster", "reptile"),
    ("frog", "amphibian"),
    ("toad", "amphibian"),
    ("salamander", "amphibian"),
    ("axolotl", "amphibian"),
    ("newt", "amphibian"),
    ("caecilian", "amphibian"),
    ("great white shark", "fish"),
    ("seahorse", "fish"),
    ("salmon", "fish"),
    ("tuna", "fish"),
    ("clownfish", "fish"),
    ("stingray", "fish"),
    ("piranha", "fish"),
    ("sturgeon", "fish"),
    ("trout", "fish"),
    ("cod", "fish"),
    ("electric eel", "fish"),
    ("ant", "insect"),
    ("honeybee", "insect"),
    ("monarch butterfly", "insect"),
    ("ladybug", "insect"),
    ("dragonfly", "insect"),
    ("grasshopper", "insect"),
    ("mosquito", "insect"),
    ("termite", "insect"),
    ("cockroach", "insect"),
    ("firefly", "insect"),
    ("wasp", "insect"),
    ("tarantula", "arachnid"),
    ("black widow", "arachnid"),
    ("scorpion", "arachnid"),
    ("tick", "arachnid"),
    ("dust mite", "arachnid"),
)

# (programming language, creator)
LANGUAGES: tuple[tuple[str, str], ...] = (
    ("Python", "Guido van Rossum"),
    ("C++", "Bjarne Stroustrup"),
    ("Java", "James Gosling"),
    ("Perl", "Larry Wall"),
    ("Ruby", "Yukihiro Matsumoto"),
    ("PHP", "Rasmus Lerdorf"),
    ("JavaScript", "Brendan Eich"),
    ("C", "Dennis Ritchie"),
    ("Pascal", "Niklaus Wirth"),
    ("Modula-2", "Niklaus Wirth"),
    ("Lisp", "John McCarthy"),
    ("Scala", "Martin Odersky"),
    ("Swift", "Chris Lattner"),
    ("C#", "Anders Hejlsberg"),
    ("TypeScript", "Anders Hejlsberg"),
    ("Rust", "Graydon Hoare"),
    ("Tcl", "John Ousterhout"),
    ("Elixir", "José Valim"),
    ("Clojure", "Rich Hickey"),
    ("MATLAB", "Cleve Moler"),
    ("Eiffel", "Bertrand Meyer"),
    ("APL", "Kenneth E. Iverson"),
    ("Zig", "Andrew Kelley"),
    ("Elm", "Evan Czaplicki"),
    ("Groovy", "James Strachan"),
    ("Nim", "Andreas Rumpf"),
    ("D", "Walter Bright"),
    ("Forth", "Charles H. Moore"),
    ("ML", "Robin Milner"),
)

# (river, a city it flows through). No city here lies on another river of this list.
RIVER_CITIES: tuple[tuple[str, str], ...] = (
    ("the Seine", "Paris"),
    ("the Thames", "London"),
    ("the Tiber", "Rome"),
    ("the Vltava", "Prague"),
    ("the Spree", "Berlin"),
    ("the Neva", "Saint Petersburg"),
    ("the Danube", "Vienna"),
    ("the Hudson", "New York City"),
    ("the Liffey", "Dublin"),
    ("the Arno", "Florence"),
    ("the Manzanares", "Madrid"),
    ("the Nile", "Cairo"),
    ("the Chao Phraya", "Bangkok"),
    ("the Moskva", "Moscow"),
    ("the Han River", "Seoul"),
    ("the Rhine", "Cologne"),
    ("the Elbe", "Dresden"),
    ("the Garonne", "Bordeaux"),
    ("the Rhône", "Lyon"),
    ("the Main", "Frankfurt"),
    ("the Isar", "Munich"),
    ("the Vistula", "Warsaw"),
    ("the Daugava", "Riga"),
    ("the Dnieper", "Kyiv"),
)

# (river, the one continent it flows through)
RIVER_CONTINENTS: tuple[tuple[str, str], ...] = (
    ("the Nile", "Africa"),
    ("the Congo River", "Africa"),
    ("the Niger River", "Africa"),
    ("the Zambezi", "Africa"),
    ("the Limpopo", "Africa"),
    ("the Orange River", "Africa"),
    ("the Amazon", "South America"),
    ("the Orinoco", "South America"),
    ("the Paraná River", "South America"),
    ("the Magdalena River", "South America"),
    ("the Mississippi", "North America"),
    ("the Missouri", "North America"),
    ("the Colorado River", "North America"),
    ("the Yukon", "North America"),
    ("the Mackenzie River", "North America"),
    ("the Rio Grande", "North America"),
    ("the Danube", "Europe"),
    ("the Rhine", "Europe"),
    ("the Volga", "Europe"),
    ("the Thames", "Europe"),
    ("the Seine", "Europe"),
    ("the Loire", "Europe"),
    ("the Elbe", "Europe"),
    ("the Vistula", "Europe"),
    ("the Dnieper", "Europe"),
    ("the Po", "Europe"),
    ("the Ganges", "Asia"),
    ("the Yangtze", "Asia"),
    ("the Mekong", "Asia"),
    ("the Indus", "Asia"),
    ("the Lena", "Asia"),
    ("the Yenisei", "Asia"),
    ("the Ob", "Asia"),
    ("the Euphrates", "Asia"),
    ("the Tigris", "Asia"),
    ("the Irrawaddy", "Asia"),
)

# (mountain, range)
MOUNTAIN_RANGES: tuple[tuple[str, str], ...] = (
    ("Mount Everest", "the Himalayas"),
    ("Kangchenjunga", "the Himalayas"),
    ("Lhotse", "the Himalayas"),
    ("Makalu", "the Himalayas"),
    ("Annapurna", "the Himalayas"),
    ("Nanga Parbat", "the Himalayas"),
    ("K2", "the Karakoram"),
    ("Broad Peak", "the Karakoram"),
    ("Gasherbrum I", "the Karakoram"),
    ("Aconcagua", "the Andes"),
    ("Ojos del Salado", "the Andes"),
    ("Chimborazo", "the Andes"),
    ("Cotopaxi", "the Andes"),
    ("Huascarán", "the Andes"),
    ("Mont Blanc", "the Alps"),
    ("the Matterhorn", "the Alps"),
    ("the Eiger", "the Alps"),
    ("the Jungfrau", "the Alps"),
    ("the Grossglockner", "the Alps"),
    ("the Zugspitze", "the Alps"),
    ("Mount Elbrus", "the Caucasus Mountains"),
    ("Mount Kazbek", "the Caucasus Mountains"),
    ("Pikes Peak", "the Rocky Mountains"),
    ("Mount Elbert", "the Rocky Mountains"),
    ("Longs Peak", "the Rocky Mountains"),
    ("Mount Robson", "the Rocky Mountains"),
    ("Mount Whitney", "the Sierra Nevada"),
    ("Mount Rainier", "the Cascade Range"),
    ("Mount Hood", "the Cascade Range"),
    ("Mount St. Helens", "the Cascade Range"),
    ("Mount Mitchell", "the Appalachian Mountains"),
    ("Mount Washington", "the Appalachian Mountains"),
    ("Mount Narodnaya", "the Ural Mountains"),
    ("Aneto", "the Pyrenees"),
    ("Gerlach Peak", "the Carpathian Mountains"),
    ("Toubkal", "the Atlas Mountains"),
    ("Galdhøpiggen", "the Scandinavian Mountains"),
    ("Denali", "the Alaska Range"),
    ("Mount Logan", "the Saint Elias Mountains"),
)

# (mountain, the one country it lies in); border peaks are left out on purpose.
MOUNTAIN_COUNTRIES: tuple[tuple[str, str], ...] = (
    ("Mount Fuji", "Japan"),
    ("Mount Kilimanjaro", "Tanzania"),
    ("Aconcagua", "Argentina"),
    ("Denali", "the United States"),
    ("Mount Whitney", "the United States"),
    ("Mount Rainier", "the United States"),
    ("Pikes Peak", "the United States"),
    ("Mount Elbrus", "Russia"),
    ("Mount Narodnaya", "Russia"),
    ("Mount Etna", "Italy"),
    ("Mount Vesuvius", "Italy"),
    ("Ben Nevis", "the United Kingdom"),
    ("Mount Ararat", "Turkey"),
    ("Chimborazo", "Ecuador"),
    ("Cotopaxi", "Ecuador"),
    ("Huascarán", "Peru"),
    ("Pico de Orizaba", "Mexico"),
    ("Mount Kenya", "Kenya"),
    ("Annapurna", "Nepal"),
    ("Nanga Parbat", "Pakistan"),
    ("the Eiger", "Switzerland"),
    ("the Jungfrau", "Switzerland"),
    ("the Grossglockner", "Austria"),
    ("Toubkal", "Morocco"),
    ("Aneto", "Spain"),
    ("Mount Teide", "Spain"),
    ("Galdhøpiggen", "Norway"),
    ("Mount Kosciuszko", "Australia"),
    ("Mount Pinatubo", "the Philippines"),
    ("Mount Kinabalu", "Malaysia"),
    ("Gerlach Peak", "Slovakia"),
    ("Mount Robson", "Canada"),
    ("Mount Logan", "Canada"),
)

# ---------------------------------------------------------------------------
# Sentence templates. {s} is the subject, {o} the object; a few relations add fields
# (see template_fields). Evidence and claim templates never coincide, so a SUPPORTS
# claim is never a word-for-word copy of its evidence.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RelationTemplates:
    """The sentence templates of one relation."""

    evidence: tuple[str, ...]
    paraphrases: tuple[str, ...]
    negations: tuple[str, ...]


TEMPLATES: dict[str, RelationTemplates] = {
    "capital": RelationTemplates(
        evidence=("{o} is the capital of {s}.",),
        paraphrases=(
            "The capital of {s} is {o}.",
            "{s} has {o} as its capital.",
            "{o} serves as the capital city of {s}.",
            "The capital city of {s} is {o}.",
        ),
        negations=("{o} is not the capital of {s}.", "The capital of {s} is not {o}."),
    ),
    "continent": RelationTemplates(
        evidence=("{s} is a country in {o}.",),
        paraphrases=(
            "{s} is located in {o}.",
            "{s} lies in {o}.",
            "{s} is one of the countries of {o}.",
            "{s} can be found in {o}.",
        ),
        negations=("{s} is not located in {o}.", "{s} is not a country in {o}."),
    ),
    "currency": RelationTemplates(
        evidence=("The official currency of {s} is {o}.",),
        paraphrases=(
            "{s} uses {o} as its currency.",
            "{o} is the currency used in {s}.",
            "{o} is the legal tender of {s}.",
            "{s} has {o} as its official currency.",
        ),
        negations=("{s} does not use {o} as its currency.",),
    ),
    "element_symbol": RelationTemplates(
        evidence=("The chemical symbol for {s} is {o}.",),
        paraphrases=(
            "{s} has the chemical symbol {o}.",
            "{s} is represented by the symbol {o}.",
            "{o} is the symbol of the chemical element {s}.",
            "In the periodic table, {s} is written as {o}.",
        ),
        negations=("{s} does not have the chemical symbol {o}.",),
    ),
    "element_number": RelationTemplates(
        evidence=("{s} has the atomic number {o}.",),
        paraphrases=(
            "The atomic number of {s} is {o}.",
            "An atom of {s} has {protons} in its nucleus.",
            "{s} is element number {o} in the periodic table.",
        ),
        negations=("The atomic number of {s} is not {o}.",),
    ),
    "planet_order": RelationTemplates(
        evidence=("{s} is the {o} planet from the Sun.",),
        paraphrases=(
            "Counting outward from the Sun, {s} is the {o} planet.",
            "{closer} closer to the Sun than {s}.",
            "In order of distance from the Sun, {s} comes {o}.",
        ),
        negations=("{s} is not the {o} planet from the Sun.",),
    ),
    "book_author": RelationTemplates(
        evidence=("{s} was written by {o}.",),
        paraphrases=(
            "{o} is the author of {s}.",
            "{o} wrote {s}.",
            "The author of {s} is {o}.",
            "{s} is a work by {o}.",
        ),
        negations=("{o} did not write {s}.", "{s} was not written by {o}."),
    ),
    "painting": RelationTemplates(
        evidence=("{s} was painted by {o}.",),
        paraphrases=(
            "{o} painted {s}.",
            "{s} is a painting by {o}.",
            "The artist who painted {s} was {o}.",
            "{o} is the painter of {s}.",
        ),
        negations=("{o} did not paint {s}.", "{s} was not painted by {o}."),
    ),
    "invention": RelationTemplates(
        evidence=("{o} is credited with inventing {s}.",),
        paraphrases=(
            "{s} was invented by {o}.",
            "{o} invented {s}.",
            "The invention of {s} is attributed to {o}.",
            "{s} is an invention of {o}.",
        ),
        negations=("{o} did not invent {s}.",),
    ),
    "composition": RelationTemplates(
        evidence=("{s} was composed by {o}.",),
        paraphrases=(
            "{o} composed {s}.",
            "{o} wrote the music of {s}.",
            "{s} is a composition by {o}.",
            "The composer of {s} is {o}.",
        ),
        negations=("{o} did not compose {s}.", "{s} was not composed by {o}."),
    ),
    "animal_class": RelationTemplates(
        evidence=("The {s} is {a_o}.",),
        paraphrases=(
            "The {s} is a type of {o}.",
            "Zoologists classify the {s} as {a_o}.",
            "Biologically, the {s} counts as {a_o}.",
            "The {s} is classified as {a_o}.",
        ),
        negations=("The {s} is not {a_o}.",),
    ),
    "language_creator": RelationTemplates(
        evidence=("{s} was created by {o}.",),
        paraphrases=(
            "{o} created the {s} programming language.",
            "{o} is the creator of {s}.",
            "The {s} programming language was designed by {o}.",
            "{s} is a programming language designed by {o}.",
        ),
        negations=("{s} was not created by {o}.", "{o} did not create {s}."),
    ),
    "river_city": RelationTemplates(
        evidence=("{s} flows through {o}.",),
        paraphrases=(
            "{o} lies on {s}.",
            "{o} is situated on the banks of {s}.",
            "{s} runs through the city of {o}.",
            "{s} passes through {o}.",
        ),
        negations=("{s} does not flow through {o}.",),
    ),
    "river_continent": RelationTemplates(
        evidence=("{s} is a river in {o}.",),
        paraphrases=(
            "{s} flows through {o}.",
            "{s} is located in {o}.",
            "{s} is one of the rivers of {o}.",
        ),
        negations=("{s} is not a river in {o}.", "{s} does not flow through {o}."),
    ),
    "mountain_range": RelationTemplates(
        evidence=("{s} is a peak in {o}.",),
        paraphrases=(
            "{s} is part of {o}.",
            "{s} belongs to {o}.",
            "{s} is one of the mountains of {o}.",
            "{s} rises in {o}.",
        ),
        negations=("{s} is not in {o}.", "{s} is not part of {o}."),
    ),
    "mountain_country": RelationTemplates(
        evidence=("{s} is a mountain in {o}.",),
        paraphrases=(
            "{s} is located in {o}.",
            "{s} can be found in {o}.",
            "{s} is situated in {o}.",
            "{s} stands in {o}.",
        ),
        negations=("{s} is not located in {o}.",),
    ),
}

# (claim relation, evidence relation) pairs about the same subject where common sense
# would bridge the gap ("Paris is the capital of France" -> "France is in Europe").
# NOT_ENOUGH_INFO rows never pair these.
LEAKY_PAIRS = frozenset(
    {
        ("continent", "capital"),
        ("continent", "currency"),
        ("river_continent", "river_city"),
        ("mountain_country", "mountain_range"),
    }
)

ORDINALS = ("", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")
NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven")


@dataclass(frozen=True)
class Fact:
    """One true fact: ``relation(subject) == obj``."""

    relation: str
    subject: str
    obj: str


@dataclass(frozen=True)
class Row:
    """One generated claim/evidence pair, before ids and splits are assigned."""

    label: str
    claim: str
    evidence: str


def build_facts() -> list[Fact]:
    """Turn the curated tables into a flat list of facts, in a fixed order."""
    facts: list[Fact] = []
    for country, capital, continent in COUNTRIES:
        facts.append(Fact("capital", country, capital))
        if continent is not None:
            facts.append(Fact("continent", country, continent))
    facts += [Fact("currency", c, cur) for c, cur in CURRENCIES]
    for element, symbol, number in ELEMENTS:
        facts.append(Fact("element_symbol", element, symbol))
        facts.append(Fact("element_number", element, str(number)))
    facts += [Fact("planet_order", p, str(i)) for i, p in enumerate(PLANETS, start=1)]
    tables: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
        ("book_author", BOOKS),
        ("painting", PAINTINGS),
        ("invention", INVENTIONS),
        ("composition", COMPOSITIONS),
        ("animal_class", ANIMALS),
        ("language_creator", LANGUAGES),
        ("river_city", RIVER_CITIES),
        ("river_continent", RIVER_CONTINENTS),
        ("mountain_range", MOUNTAIN_RANGES),
        ("mountain_country", MOUNTAIN_COUNTRIES),
    )
    for relation, table in tables:
        facts += [Fact(relation, s, o) for s, o in table]
    check_facts(facts)
    return facts


def check_facts(facts: Iterable[Fact]) -> None:
    """Fail loudly if a relation is not functional or a field has forbidden characters."""
    seen: dict[tuple[str, str], str] = {}
    for fact in facts:
        if fact.relation not in TEMPLATES:
            raise ValueError(f"no templates for relation {fact.relation!r}")
        key = (fact.relation, fact.subject)
        if key in seen:
            raise ValueError(f"duplicate subject {fact.subject!r} in {fact.relation!r}")
        seen[key] = fact.obj
        for text in (fact.subject, fact.obj):
            if any(ch in text for ch in "\t\r\n"):
                raise ValueError(f"forbidden whitespace in {text!r}")


def with_article(noun: str) -> str:
    """Prefix a singular noun with "a" or "an"."""
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def template_fields(relation: str, subject: str, obj: str) -> dict[str, str]:
    """Return the values that the templates of ``relation`` may refer to."""
    fields = {"s": subject, "o": obj}
    if relation == "animal_class":
        fields["a_o"] = with_article(obj)
    elif relation == "element_number":
        fields["protons"] = f"{obj} proton" if obj == "1" else f"{obj} protons"
    elif relation == "planet_order":
        position = int(obj)
        fields["o"] = ORDINALS[position]
        before = position - 1
        if before == 0:
            fields["closer"] = "No planet orbits"
        elif before == 1:
            fields["closer"] = "Only one planet orbits"
        else:
            fields["closer"] = f"Exactly {NUMBER_WORDS[before]} planets orbit"
    return fields


def render(template: str, relation: str, subject: str, obj: str) -> str:
    """Fill a template and capitalise the first letter of the sentence."""
    text = template.format(**template_fields(relation, subject, obj))
    if text.endswith(".."):  # an object such as "Washington, D.C." ends the sentence
        text = text[:-1]
    return text[0].upper() + text[1:]


def object_pools(facts: Iterable[Fact]) -> dict[str, list[str]]:
    """Map each relation to the sorted distinct objects it uses (the swap candidates)."""
    pools: dict[str, set[str]] = {}
    for fact in facts:
        pools.setdefault(fact.relation, set()).add(fact.obj)
    return {relation: sorted(objs) for relation, objs in sorted(pools.items())}


class Generator:
    """Builds rows from facts while keeping every claim unique."""

    def __init__(self, facts: list[Fact], rng: random.Random) -> None:
        self.facts = facts
        self.rng = rng
        self.pools = object_pools(facts)
        self.true_facts = {(f.relation, f.subject, f.obj) for f in facts}
        self.seen_claims: set[str] = set()
        self.dropped = 0

    def evidence(self, fact: Fact) -> str:
        """Render the evidence sentence that states ``fact``."""
        template = self.rng.choice(TEMPLATES[fact.relation].evidence)
        return render(template, fact.relation, fact.subject, fact.obj)

    def wrong_objects(self, fact: Fact) -> list[str]:
        """Return the same-type objects that make a false claim about ``fact.subject``, shuffled."""
        wrong = [
            o
            for o in self.pools[fact.relation]
            if o != fact.obj and (fact.relation, fact.subject, o) not in self.true_facts
        ]
        self.rng.shuffle(wrong)
        return wrong

    def claim(self, fact: Fact, templates: tuple[str, ...], objects: list[str]) -> str | None:
        """Render a claim not produced before, trying templates and objects in random order."""
        order = list(templates)
        self.rng.shuffle(order)
        for obj in objects:
            for template in order:
                text = render(template, fact.relation, fact.subject, obj)
                key = text.casefold()
                if key not in self.seen_claims:
                    self.seen_claims.add(key)
                    return text
        return None

    def supports(self, fact: Fact) -> Row | None:
        """A paraphrase of the fact, with the fact's own evidence."""
        text = self.claim(fact, TEMPLATES[fact.relation].paraphrases, [fact.obj])
        return None if text is None else Row(SUPPORTS, text, self.evidence(fact))

    def refutes(self, fact: Fact) -> Row | None:
        """A swapped-object or negated version of the fact, with the fact's own evidence."""
        templates = TEMPLATES[fact.relation]
        text = None
        if self.rng.random() < NEGATION_FRACTION:
            text = self.claim(fact, templates.negations, [fact.obj])
        if text is None:
            text = self.claim(fact, templates.paraphrases, self.wrong_objects(fact)[:3])
        return None if text is None else Row(REFUTES, text, self.evidence(fact))

    def unrelated_fact(self, fact: Fact, claim_objects: list[str], same_subject_ok: bool) -> Fact:
        """Pick a fact that neither supports nor refutes the claim.

        For a true claim, half of the time this is another relation of the same subject
        (never one of LEAKY_PAIRS). Otherwise it is a fact that shares no entity with the
        claim. A false claim always gets such an unrelated fact, since evidence about its
        own subject could refute it by common sense ("France is a country in Europe" vs
        "The capital of France is Tokyo.").
        """
        banned = {fact.subject.casefold(), *(o.casefold() for o in claim_objects)}
        same_subject = [
            f
            for f in self.facts
            if f.subject == fact.subject
            and f.relation != fact.relation
            and (fact.relation, f.relation) not in LEAKY_PAIRS
            and f.obj.casefold() not in banned
        ]
        if same_subject_ok and same_subject and self.rng.random() < 0.5:
            return self.rng.choice(same_subject)
        while True:
            other = self.rng.choice(self.facts)
            if other.relation == fact.relation and other.obj == fact.obj:
                continue
            if other.subject.casefold() in banned or other.obj.casefold() in banned:
                continue
            return other

    def not_enough_info(self, fact: Fact) -> Row | None:
        """A true or false claim about the fact, with evidence about something else."""
        true_claim = self.rng.random() < 0.5
        objects = [fact.obj] if true_claim else self.wrong_objects(fact)[:3]
        text = self.claim(fact, TEMPLATES[fact.relation].paraphrases, objects)
        if text is None:
            return None
        other = self.unrelated_fact(fact, [fact.obj, *objects], same_subject_ok=true_claim)
        return Row(NOT_ENOUGH_INFO, text, self.evidence(other))

    def row(self, fact: Fact, label: str) -> Row | None:
        """Generate one row of the given label for ``fact``."""
        if label == SUPPORTS:
            return self.supports(fact)
        if label == REFUTES:
            return self.refutes(fact)
        return self.not_enough_info(fact)

    def generate(self) -> list[Row]:
        """Give every fact two of the three labels, rotating the pairs to balance labels."""
        order = list(self.facts)
        self.rng.shuffle(order)
        rows: list[Row] = []
        for i, fact in enumerate(order):
            for label in LABEL_PAIRS[i % len(LABEL_PAIRS)]:
                row = self.row(fact, label)
                if row is None:
                    self.dropped += 1
                else:
                    rows.append(row)
        return rows


def assign_splits(rows: list[Row], rng: random.Random) -> list[str]:
    """Return a split per row: about TRAIN_FRACTION of each label in train, the rest in test."""
    splits = ["test"] * len(rows)
    for label in LABELS:
        indices = [i for i, row in enumerate(rows) if row.label == label]
        rng.shuffle(indices)
        for i in indices[: round(len(indices) * TRAIN_FRACTION)]:
            splits[i] = "train"
    return splits


def build_table(seed: int) -> list[tuple[str, str, str, str, str]]:
    """Generate the full dataset as ``(claim_id, split, label, claim, evidence)`` tuples."""
    rng = random.Random(seed)
    generator = Generator(build_facts(), rng)
    rows = generator.generate()
    if generator.dropped:
        print(f"note: dropped {generator.dropped} rows with no unique claim", file=sys.stderr)
    splits = assign_splits(rows, rng)
    paired = list(zip(rows, splits, strict=True))
    rng.shuffle(paired)
    width = max(4, len(str(len(paired))))
    table = [
        (f"c{n:0{width}d}", split, row.label, row.claim, row.evidence)
        for n, (row, split) in enumerate(paired, start=1)
    ]
    for record in table:
        for field in record:
            if not field or any(ch in field for ch in "\t\r\n"):
                raise ValueError(f"bad field {field!r} in {record!r}")
    return table


def write_tsv_atomic(path: Path, table: list[tuple[str, str, str, str, str]]) -> None:
    """Write the table as UTF-8 TSV with a header, via a temp file and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["\t".join(COLUMNS)] + ["\t".join(record) for record in table]
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write("\n".join(lines) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output TSV (default: {DEFAULT_OUT.name})"
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default: {DEFAULT_SEED})"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Generate the dataset and print its counts per label and split."""
    args = parse_args(argv)
    table = build_table(args.seed)
    write_tsv_atomic(args.out, table)
    counts = Counter((split, label) for _, split, label, _, _ in table)
    print(f"wrote {len(table)} rows to {args.out}")
    for split in ("train", "test"):
        parts = ", ".join(f"{label}={counts[(split, label)]}" for label in LABELS)
        print(f"  {split}: {parts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
